package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Stamp fingerprints what the tool registry is built from (each
// collection's name, type and schema version): when it changes, the
// transport tells open streams notifications/tools/list_changed.
func (s *Server) Stamp() string {
	h := sha256.New()
	for _, c := range s.opts.Catalog.Collections() {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d\x00%d\n", c.ID, c.Name, c.Type, c.Version, c.Updated)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
