package filter

// Expr is a boolean expression: a Logical combination or a Compare.
type Expr interface{ expr() }

// LogicOp joins two expressions.
type LogicOp uint8

const (
	And LogicOp = iota + 1
	Or
)

// Logical is `Left && Right` or `Left || Right`.
type Logical struct {
	Op          LogicOp
	Left, Right Expr
}

// Op is a comparison operator. The Any form (`?=`...) compares any element
// of a multi-valued left operand.
type Op struct {
	Base string // "=", "!=", ">", ">=", "<", "<=", "~", "!~"
	Any  bool
}

func (o Op) String() string {
	if o.Any {
		return "?" + o.Base
	}
	return o.Base
}

// Compare is `Left Op Right`.
type Compare struct {
	Left  Operand
	Op    Op
	Right Operand
}

// Positions: every operand records the byte offset in the source where it
// starts (Pos), so an expression that parses but does not compile can say
// where the problem is, as a syntax error does.

func (*Logical) expr() {}
func (*Compare) expr() {}

// Operand is one side of a comparison.
type Operand interface{ operand() }

// LitKind is the kind of a literal.
type LitKind uint8

const (
	LitString LitKind = iota + 1
	LitNumber
	LitBool
	LitNull
)

// Literal is a constant.
type Literal struct {
	Kind LitKind
	Str  string
	Num  float64
	Bool bool
	Pos  int
}

// Modifiers apply, in order, to a field or request reference.
type Modifiers []string

// Has reports whether m contains name.
func (m Modifiers) Has(name string) bool {
	for _, x := range m {
		if x == name {
			return true
		}
	}
	return false
}

// Field is a reference to a field of the record under test, possibly
// through relations, back-relations (`<coll>_via_<field>`) or into a JSON
// value: `author.name`, `meta.tags.0`.
type Field struct {
	Path []string
	Mods Modifiers
	Pos  int
}

// Request is `@request.<Path...>`: auth, method, context, headers, query,
// body.
type Request struct {
	Path []string
	Mods Modifiers
	Pos  int
}

// CollectionRef is `@collection.<Name>.<Path...>`: any record of another
// collection.
type CollectionRef struct {
	Name string
	Path []string
	Mods Modifiers
	Pos  int
}

// Macro is a datetime macro such as `@now` or `@todayStart`.
type Macro struct {
	Name string
	Pos  int
}

// Call is a function call: geoDistance or strftime.
type Call struct {
	Name string
	Args []Operand
	Pos  int
}

func (*Literal) operand()       {}
func (*Field) operand()         {}
func (*Request) operand()       {}
func (*CollectionRef) operand() {}
func (*Macro) operand()         {}
func (*Call) operand()          {}

// PosOf is the offset in the source where operand o starts.
func PosOf(o Operand) int {
	switch x := o.(type) {
	case *Literal:
		return x.Pos
	case *Field:
		return x.Pos
	case *Request:
		return x.Pos
	case *CollectionRef:
		return x.Pos
	case *Macro:
		return x.Pos
	case *Call:
		return x.Pos
	}
	return 0
}
