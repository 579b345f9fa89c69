package keys

import "strings"

// HashTag returns the part of key Redis Cluster hashes: the first
// non-empty {…} section, else the whole key.
func HashTag(key string) string {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return key
	}
	end := strings.IndexByte(key[open+1:], '}')
	if end <= 0 {
		return key
	}
	return key[open+1 : open+1+end]
}

// crc16 is the CRC16-CCITT (XMODEM) checksum Redis Cluster uses for slots.
func crc16(s string) uint16 {
	var crc uint16
	for i := range len(s) {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// Slot is the Redis Cluster slot of key.
func Slot(key string) int { return int(crc16(HashTag(key)) % 16384) }
