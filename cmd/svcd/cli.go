package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// command is one svcd command: how `svcd help` presents it and how it
// runs. A name of two words ("admin create") is a subcommand of a group
// ("admin").
type command struct {
	name     string // as typed after svcd
	args     string // after the name on the usage line: "EMAIL PASSWORD [flags]"
	summary  string // its line in `svcd help`
	about    string // what it does: the help's body
	examples string // shell lines, one example each
	// flags are the command's flags, listed by its help (nil: none, or
	// about lists them itself).
	flags func() *flag.FlagSet
	// text, when set, is the whole help but the examples, with its own
	// usage line and options (the repair commands').
	text string
	run  func(args []string) error
}

// run executes svcd with args (os.Args[1:]) and returns the exit status:
// 0, 1 when the command failed, 2 for a mistake on the command line.
// Help asked for goes to stdout and exits 0; help after a mistake goes to
// stderr.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		return runHelp(args[1:], stdout, stderr)
	case "--version", "-version", "-v":
		args = append([]string{"version"}, args[1:]...)
	}
	c, rest, code := lookup(args, stdout, stderr)
	if c == nil {
		return code
	}
	err := c.run(rest)
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		c.printHelp(stdout)
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "svcd %s: %s\nRun 'svcd help %s' for usage.\n", c.name, ue.msg, c.name)
		return 2
	default:
		fmt.Fprintln(stderr, "svcd:", err)
		return 1
	}
}

// lookup finds the command args name and the arguments left for it. When
// there is none (an unknown name, a group without its subcommand, or help
// on a group) it has printed what to do and returns the exit status.
func lookup(args []string, stdout, stderr io.Writer) (c *command, rest []string, code int) {
	if c := find(args[0]); c != nil {
		return c, args[1:], 0
	}
	if !isGroup(args[0]) {
		fmt.Fprintf(stderr, "svcd: unknown command %q%s\nRun 'svcd help' for the list of commands.\n",
			args[0], didYouMean(args[0], topNames()))
		return nil, nil, 2
	}
	group := args[0]
	if len(args) == 1 {
		fmt.Fprintf(stderr, "svcd %s: which command?\n\n", group)
		printGroup(stderr, group)
		return nil, nil, 2
	}
	switch args[1] {
	case "help", "-h", "-help", "--help":
		printGroup(stdout, group)
		return nil, nil, 0
	}
	if c := find(group + " " + args[1]); c != nil {
		return c, args[2:], 0
	}
	var subs []string
	for _, c := range commands() {
		if g, sub, ok := strings.Cut(c.name, " "); ok && g == group {
			subs = append(subs, sub)
		}
	}
	fmt.Fprintf(stderr, "svcd %s: unknown command %q%s\nRun 'svcd help %s' for its commands.\n",
		group, args[1], didYouMean(args[1], subs), group)
	return nil, nil, 2
}

// runHelp is `svcd help [COMMAND]`.
func runHelp(args []string, stdout, stderr io.Writer) int {
	topic := strings.Join(args, " ")
	switch {
	case topic == "" || topic == "help":
		printUsage(stdout)
		return 0
	case find(topic) != nil:
		find(topic).printHelp(stdout)
		return 0
	case isGroup(topic):
		printGroup(stdout, topic)
		return 0
	}
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	fmt.Fprintf(stderr, "svcd help: unknown command %q%s\nRun 'svcd help' for the list of commands.\n",
		topic, didYouMean(topic, append(names, topNames()...)))
	return 2
}

// didYouMean is " (did you mean X?)" for the candidate closest to word,
// or "".
func didYouMean(word string, candidates []string) string {
	if c := closest(word, candidates); c != "" {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return ""
}

func find(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

func isGroup(name string) bool {
	for _, c := range commands() {
		if strings.HasPrefix(c.name, name+" ") {
			return true
		}
	}
	return false
}

// topNames are the words that may follow svcd: commands and groups.
func topNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range commands() {
		n, _, _ := strings.Cut(c.name, " ")
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return append(out, "help")
}

// printHelp writes `svcd help NAME`: usage line, description, flags,
// examples.
func (c *command) printHelp(w io.Writer) {
	if c.text != "" {
		fmt.Fprint(w, strings.TrimRight(c.text, "\n")+"\n")
	} else {
		fmt.Fprintf(w, "usage: svcd %s %s\n\n%s\n", c.name, c.args, strings.TrimSpace(c.about))
	}
	if c.flags != nil {
		fmt.Fprintf(w, "\nFlags:\n")
		printFlags(w, c.flags())
	}
	if c.examples != "" {
		fmt.Fprintf(w, "\nExamples:\n")
		for _, l := range strings.Split(strings.TrimSpace(c.examples), "\n") {
			fmt.Fprintf(w, "  %s\n", strings.TrimSpace(l))
		}
	}
}

// printGroup lists a group's commands.
func printGroup(w io.Writer, group string) {
	fmt.Fprintf(w, "usage: svcd %s COMMAND [arguments] [flags]\n\nCommands:\n", group)
	for _, c := range commands() {
		if strings.HasPrefix(c.name, group+" ") {
			fmt.Fprintf(w, "  %-18s %s\n", strings.TrimPrefix(c.name, group+" "), c.summary)
		}
	}
	fmt.Fprintf(w, "\nRun 'svcd help %s COMMAND' for the flags and examples of one.\n", group)
}

// printUsage is `svcd help`.
func printUsage(w io.Writer) {
	fmt.Fprint(w, "svcd: a complete backend in one binary, replicated with Raft.\n\n"+
		"Usage:\n  svcd COMMAND [arguments] [flags]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-18s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `  help [COMMAND]     this list, or a command's flags and examples

Run 'svcd help COMMAND' or 'svcd COMMAND --help' for a command's flags and
examples. Flags may come before or after the arguments.

Environment: SVC_DATA_DIR (./svc_data), SVC_PORT (8090), SVC_LOG_LEVEL (info),
SVC_LOG_FORMAT (text on a terminal, else json), SVC_CLUSTER_KEY,
SVC_JWT_SECRET, SVC_SETUP_KEY. See README.md and docs/configuration.md.
`)
}
