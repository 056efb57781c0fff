package main

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// usageError is a mistake on the command line (an unknown flag, a
// missing argument): main prints it with a pointer to the command's help
// and exits with status 2, as Go's own tools do.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// parseArgs parses a command's arguments into fs. Flags may come before,
// between or after the positional arguments (svcd admin create EMAIL
// PASSWORD --dir DIR), with one dash or two, as --name value or
// --name=value; "--" ends the flags. -h, -help and --help return
// flag.ErrHelp (main prints the command's help). An unknown flag, or a
// bad value, is a usage error; an unknown flag's names the closest known
// flag.
func parseArgs(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var flags, positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		if name == "h" || name == "help" {
			return flag.ErrHelp
		}
		f := fs.Lookup(name)
		if f == nil {
			return unknownFlag(fs, name)
		}
		flags = append(flags, a)
		if !hasValue && !isBoolFlag(f) {
			if i+1 == len(args) {
				return usageErrorf("flag --%s needs a value", name)
			}
			flags = append(flags, args[i+1])
			i++
		}
	}
	if err := fs.Parse(append(append(flags, "--"), positional...)); err != nil {
		return &usageError{msg: err.Error()}
	}
	return nil
}

// unknownFlag is the usage error for --name, naming the closest flag fs
// knows.
func unknownFlag(fs *flag.FlagSet, name string) error {
	var known []string
	fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
	if c := closest(name, known); c != "" {
		return usageErrorf("unknown flag --%s (did you mean --%s?)", name, c)
	}
	return usageErrorf("unknown flag --%s", name)
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// printFlags lists fs's flags the way svcd's docs write them:
// "--name VALUE  usage (default x)", sorted by name.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	type line struct{ left, right string }
	var lines []line
	width := 0
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		left := "--" + f.Name
		if !isBoolFlag(f) {
			// A type name ("string", "int") says less than the flag's
			// own name; a `quoted` word of the usage says more.
			switch arg {
			case "", "value", "string", "int", "uint", "uint64", "int64", "float", "duration":
				arg = strings.ReplaceAll(f.Name, "-", "_")
			}
			left += " " + strings.ToUpper(arg)
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		lines = append(lines, line{left, usage})
		width = max(width, len(left))
	})
	sort.Slice(lines, func(i, j int) bool { return lines[i].left < lines[j].left })
	for _, l := range lines {
		fmt.Fprintf(w, "  %-*s  %s\n", width, l.left, l.right)
	}
}
