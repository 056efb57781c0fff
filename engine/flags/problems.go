package flags

import (
	"fmt"
	"regexp"
	"strconv"

	"svcd/engine"
)

// problems collects what is wrong with a definition, one message per
// path ("rules.0.when.all.1.op"), for one 422 that names them all.
type problems map[string]string

// maxProblems bounds the details of one answer.
const maxProblems = 50

// add records the first problem at path.
func (p problems) add(path, format string, args ...any) {
	if _, dup := p[path]; dup || len(p) >= maxProblems {
		return
	}
	p[path] = fmt.Sprintf(format, args...)
}

// err is the 422 naming every problem, or nil.
func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return engine.ValidationError(p)
}

// indexPath is path's element i ("rules.0").
func indexPath(path string, i int) string { return path + "." + strconv.Itoa(i) }

// namePattern is the form of flag keys, segment names, variation names and
// rule ids: no colon (a rollout hashes "key:value"), no slash (they are
// path segments).
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

// nameProblem says what is wrong with name, or "".
func nameProblem(name string) string {
	if name == "" {
		return "is required"
	}
	if !namePattern.MatchString(name) {
		return "must be 1-128 letters, digits, '_', '.' or '-', starting with a letter or digit"
	}
	return ""
}
