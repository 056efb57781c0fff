package jsvm

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
)

// Names are the members of ctx that code also sees as names of their own
// (CONTRACT.md: "each member of ctx is also bound as a name of its own").
// Every kind of code is compiled with the same list, so a compiled program
// does not depend on its kind; a name a kind does not pass is undefined.
var Names = []string{
	"record", "existing", "auth", "helpers",
	"params", "query", "body", "set",
	"payload", "attempt", "queue", "jobId",
	"scheduledAt", "step", "input", "event", "collection",
}

// wrapperVersion changes whenever the wrapper below does, so a cached
// program never outlives the wrapper it was compiled with.
const wrapperVersion = "2"

// header opens the function the code is the body of; the code starts on
// the wrapper's second line, so a position in the code is the compiled
// position one line up.
var header = "(async function(ctx, " + strings.Join(Names, ", ") + ") {\"use strict\";\n"

const footer = "\n})"

// CompileError is code that does not parse: the message and the position
// in the code as its author wrote it (lines and columns from 1).
type CompileError struct {
	Message string
	Line    int
	Column  int
}

func (e *CompileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Message)
	}
	return e.Message
}

// compile turns code into a program evaluating to the async function.
// The wrapped source must be that one function and nothing else: code
// that closes the function early and goes on at the top level is refused.
func compile(code string) (*goja.Program, error) {
	tree, err := parser.ParseFile(nil, "code.js", header+code+footer, 0)
	if err != nil {
		return nil, compileError(code, err)
	}
	if !onlyTheFunction(tree) {
		return nil, &CompileError{Message: "the code closes its function early (it is the body of an async function)", Line: 1, Column: 1}
	}
	prg, err := goja.CompileAST(tree, true)
	if err != nil {
		return nil, compileError(code, err)
	}
	return prg, nil
}

// onlyTheFunction reports whether the program is one expression
// statement, the parenthesised async function of the header.
func onlyTheFunction(tree *ast.Program) bool {
	if len(tree.Body) != 1 {
		return false
	}
	st, ok := tree.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return false
	}
	fn, ok := st.Expression.(*ast.FunctionLiteral)
	return ok && fn.Async
}

// compileError maps a parse or compile error to the author's position:
// the parser's errors carry it; errors the parser accepts but the compiler
// does not (a redeclared let) have it only in the text, "Line L:C".
func compileError(code string, err error) *CompileError {
	var list parser.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		return positioned(code, list[0].Message, list[0].Position.Line, list[0].Position.Column)
	}
	msg := err.Error()
	var ce *goja.CompilerSyntaxError
	if errors.As(err, &ce) {
		msg = ce.Message
		if ce.File != nil {
			p := ce.File.Position(ce.Offset)
			return positioned(code, msg, p.Line, p.Column)
		}
	}
	if m := linePos.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		col, _ := strconv.Atoi(m[2])
		return positioned(code, m[3], line, col)
	}
	return &CompileError{Message: msg}
}

// linePos is goja's "code.js: Line 3:11 Unexpected token ;".
var linePos = regexp.MustCompile(`Line (\d+):(\d+) (.*)$`)

// positioned shifts a wrapper position to the code's own. An error in
// the header can only come from code that closes the function early: it
// points at the code's start. One in the footer is code that ended too
// soon: it points just past the code's end.
func positioned(code, msg string, line, col int) *CompileError {
	line--
	lines := strings.Split(code, "\n")
	switch {
	case line < 1:
		line, col = 1, 1
	case line > len(lines):
		line, col = len(lines), len(lines[len(lines)-1])+1
	}
	return &CompileError{Message: msg, Line: line, Column: col}
}
