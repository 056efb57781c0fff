package suite

import (
	"bufio"
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"
)

// raftMarkers are the warnings hashicorp/raft logs when a node starts an
// election or a leader gives up: which one started an election tells a
// follower that stopped hearing its leader from a leader that stopped
// hearing a quorum.
var raftMarkers = []string{
	"heartbeat timeout reached, starting election",
	"failed to contact quorum of nodes, stepping down",
}

// raftEvent is one such warning in a node's log.
type raftEvent struct {
	at   time.Time
	node string
	msg  string
}

// logRaftEvents logs every node's election and step-down warnings of the
// run in time order, beside the nemesis's and the monitor's lines (the
// node logs are gone once the run passes).
func logRaftEvents(env *Env) {
	var evs []raftEvent
	for _, nd := range env.C.Nodes() {
		b, err := nd.ReadLog()
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			for _, m := range raftMarkers {
				if !bytes.Contains(line, []byte(m)) {
					continue
				}
				var rec struct {
					At time.Time `json:"time"`
				}
				json.Unmarshal(line, &rec)
				at := rec.At
				evs = append(evs, raftEvent{at: at, node: nd.Name, msg: m})
			}
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at.Before(evs[j].at) })
	counts := map[string]int{}
	for _, e := range evs {
		counts[e.msg]++
		env.T.Logf("%s raft: %s: %s", e.at.Local().Format("15:04:05.000"), e.node, e.msg)
	}
	var parts []string
	for _, m := range raftMarkers {
		parts = append(parts, strings.SplitN(m, ",", 2)[0]+": "+strconv.Itoa(counts[m]))
	}
	env.T.Logf("raft warnings in the node logs: %s", strings.Join(parts, "; "))
}
