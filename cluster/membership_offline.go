package cluster

import (
	"path/filepath"

	"github.com/hashicorp/raft"
)

// RecordedMembership returns the newest membership the stopped node's
// Raft directory dir records: the last membership change its log holds
// that can be read, else the one of its newest snapshot. ok is false when
// neither can be read (the directory is empty, or too damaged). It reads
// the log only once its structure checks out (scanLogFile), so damage
// never panics.
func RecordedMembership(dir string) (servers []Server, ok bool) {
	if sum, err := scanLockedLog(dir, nil); err == nil && sum.Last > 0 {
		if logs, err := openLogStore(filepath.Join(dir, "raft.db"), true); err == nil {
			defer logs.Close()
			for idx := sum.Last; idx >= sum.First && idx > 0; idx-- {
				var l raft.Log
				if getLogSafely(logs, idx, &l) != nil || l.Type != raft.LogConfiguration || checkConfigurationEntry(l.Data) != nil {
					continue
				}
				return serversOf(raft.DecodeConfiguration(l.Data)), true
			}
		}
	}
	snap, err := newestSnapshot(dir)
	if err != nil || snap == nil || snap.Meta.Version == 0 || checkConfiguration(snap.Meta.Configuration) != nil {
		return nil, false
	}
	return serversOf(snap.Meta.Configuration), true
}

func serversOf(c raft.Configuration) []Server {
	out := make([]Server, 0, len(c.Servers))
	for _, s := range c.Servers {
		out = append(out, Server{ID: string(s.ID), Addr: string(s.Address), Voter: s.Suffrage == raft.Voter})
	}
	return out
}
