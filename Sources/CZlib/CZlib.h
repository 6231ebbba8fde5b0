// zlib's CRC-32 (crc32_z, crc32_combine): the checksums of the pieces a segmented download
// writes ahead of its hash.
#include <zlib.h>
