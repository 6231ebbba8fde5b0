// Extended attributes (xattr(7)) from glibc, which Swift's Glibc module leaves out.
#include <sys/xattr.h>
