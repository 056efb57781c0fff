package harness

import (
	"context"
	"fmt"
	"os/exec"
)

// Command runs another svcd subcommand (svcd repair ..., for example) with
// the node's binary, data directory and environment, as an operator would
// on the node's machine, and returns its combined output. The node should
// be stopped when the subcommand needs that; err carries the exit status.
func (n *Node) Command(ctx context.Context, args ...string) ([]byte, error) {
	n.mu.Lock()
	dataDir, env := n.dataDir, append([]string(nil), n.env...)
	n.mu.Unlock()
	if dataDir == "" {
		return nil, fmt.Errorf("%s: Command before Start", n.name())
	}
	bin := n.Bin
	if bin == "" {
		return nil, fmt.Errorf("%s: no binary", n.name())
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(cleanEnv(), "SVC_DATA_DIR="+dataDir)
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = sysProcAttr()
	return cmd.CombinedOutput()
}
