package csv

import "strings"

// Spreadsheet formula injection (OWASP "CSV Injection"). A spreadsheet
// opening an export runs a cell that starts with =, +, -, @, a tab or a
// carriage return as a formula. The export therefore writes such a TEXT
// cell behind one `'`, which spreadsheets take as "this is text" and do not
// show. Only text cells are guarded: numbers (-5), booleans and JSON cells
// (objects, arrays, the JSON text of a json field) are never formulas to
// a spreadsheet and are written as they are.
//
// The escape must be undone exactly on import, also for a text whose real
// value starts with `'`. So the rule is on runs of quotes: a text made of
// zero or more `'` and then a formula character is written with one more
// `'` in front; on import, a cell made of one or more `'` and then a
// formula character loses its first `'`. Every other text, and every other
// cell, is left as it is. The two are inverse: an escaped cell always
// starts with a quote run before a formula character, and an unescaped
// text never does, so no cell is ambiguous.

// csvFormulaChars start a formula in a spreadsheet cell.
const csvFormulaChars = "=+-@\t\r"

// csvFormulaLike reports whether s is zero or more `'` followed by a
// formula character.
func csvFormulaLike(s string) bool {
	rest := strings.TrimLeft(s, "'")
	return rest != "" && strings.IndexByte(csvFormulaChars, rest[0]) >= 0
}

// appendCSVText appends the cell of a text value: s, behind one `'` when
// a spreadsheet could take it for a formula.
func appendCSVText(cell []byte, s string) []byte {
	if csvFormulaLike(s) {
		cell = append(cell, '\'')
	}
	return append(cell, s...)
}

// csvUnescapeText undoes appendCSVText on a cell read as text.
func csvUnescapeText(cell string) string {
	if len(cell) > 1 && cell[0] == '\'' && csvFormulaLike(cell[1:]) {
		return cell[1:]
	}
	return cell
}
