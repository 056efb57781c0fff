// Package checker holds the history checkers of the fault tests: models
// for github.com/anishathalye/porcupine's linearizability checker, and
// the check of webhook deliveries against what was committed
// (webhooks.go), and the files workload's checker (files.go), a pure
// function of the history and every node's final state.
package checker

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// Register operations on one of several keys.
const (
	OpRead = iota
	OpWrite
	OpCAS
)

// RegisterInput is an operation's request.
type RegisterInput struct {
	Key    string
	Op     int
	Value  int64 // write, cas: the new value
	Expect int64 // cas: the value it must replace
}

// RegisterOutput is an operation's outcome. Unknown marks an operation
// whose outcome the client never learned (a timeout, a 503 that may have
// been applied): it is given an infinite return time and accepted either
// way.
type RegisterOutput struct {
	Value   int64 // read: the value (0: never written)
	OK      bool  // cas: applied
	Unknown bool
}

// RegisterModel is a register per key with read, write and compare-and-set.
func RegisterModel() porcupine.Model {
	return porcupine.Model{
		Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
			byKey := map[string][]porcupine.Operation{}
			var keys []string
			for _, op := range h {
				k := op.Input.(RegisterInput).Key
				if _, ok := byKey[k]; !ok {
					keys = append(keys, k)
				}
				byKey[k] = append(byKey[k], op)
			}
			out := make([][]porcupine.Operation, 0, len(keys))
			for _, k := range keys {
				out = append(out, byKey[k])
			}
			return out
		},
		Init: func() any { return int64(0) },
		Step: func(state, input, output any) (bool, any) {
			v := state.(int64)
			in, out := input.(RegisterInput), output.(RegisterOutput)
			switch in.Op {
			case OpRead:
				return out.Unknown || out.Value == v, v
			case OpWrite:
				return true, in.Value
			}
			// Compare-and-set: deterministic given the state.
			if v == in.Expect {
				return out.Unknown || out.OK, in.Value
			}
			return out.Unknown || !out.OK, v
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(RegisterInput), output.(RegisterOutput)
			suffix := ""
			if out.Unknown {
				suffix = " (unknown)"
			}
			switch in.Op {
			case OpRead:
				return fmt.Sprintf("read(%s) -> %d%s", in.Key, out.Value, suffix)
			case OpWrite:
				return fmt.Sprintf("write(%s, %d)%s", in.Key, in.Value, suffix)
			}
			return fmt.Sprintf("cas(%s, %d -> %d) -> %v%s", in.Key, in.Expect, in.Value, out.OK, suffix)
		},
	}
}
