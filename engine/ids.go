package engine

import (
	"crypto/rand"
	"regexp"
)

const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// IDLength is the length of record ids and of the random part of prefixed ids.
const IDLength = 15

var recordIDPattern = regexp.MustCompile(`^[a-z0-9]{15}$`)

// NewID returns 15 random characters of [a-z0-9] (about 77 bits).
func NewID() string {
	var b [IDLength]byte
	var r [IDLength * 2]byte
	for filled := 0; filled < IDLength; {
		rand.Read(r[:])
		for _, c := range r {
			// 252 = 7*36: reject to keep the distribution uniform.
			if c >= 252 {
				continue
			}
			b[filled] = idAlphabet[int(c)%36]
			filled++
			if filled == IDLength {
				break
			}
		}
	}
	return string(b[:])
}

// ValidRecordID reports whether id has the record id form.
func ValidRecordID(id string) bool { return recordIDPattern.MatchString(id) }
