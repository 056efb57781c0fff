package filter

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"svcd/engine/schema"
)

// CompileError is an expression that parses but cannot be applied to the
// collection (an unknown field, a modifier where it makes no sense...).
// Pos is the offset of the operand or comparison at fault, -1 when the
// error concerns no one place.
type CompileError struct {
	Pos int
	Msg string
}

func (e *CompileError) Error() string {
	if e.Pos < 0 {
		return "filter: " + e.Msg
	}
	return fmt.Sprintf("filter: %s at offset %d", e.Msg, e.Pos)
}

func compileErr(format string, args ...any) error {
	return &CompileError{Pos: -1, Msg: fmt.Sprintf(format, args...)}
}

// at gives a CompileError without a position the position pos.
func at(err error, pos int) error {
	var ce *CompileError
	if errors.As(err, &ce) && ce.Pos < 0 {
		ce.Pos = pos
	}
	return err
}

// maxPathDepth bounds relation traversal in one reference.
const maxPathDepth = 6

// SQL is a compiled condition: a boolean SQL expression over the base
// collection's table (aliased as the alias given to CompileSQL) whose
// parameters are numbered ?1..?N and given in Args.
type SQL struct {
	Where string
	Args  []any
}

type compiler struct {
	r     Resolver
	env   *Env
	base  *Collection
	alias string
	args  []any
	n     int
}

// CompileSQL compiles e into a condition over base's table, aliased as
// alias in the enclosing query. Values never enter the SQL text: they are
// numbered parameters. Identifiers come from the schema and are quoted.
// args are the parameters the enclosing query already has: numbering goes
// on after them, and the result's Args holds them all.
func CompileSQL(e Expr, base *Collection, r Resolver, env *Env, alias string, args ...any) (*SQL, error) {
	if env == nil {
		env = &Env{}
	}
	c := &compiler{r: r, env: env, base: base, alias: alias, args: append([]any(nil), args...)}
	where, err := c.expr(e)
	if err != nil {
		return nil, err
	}
	return &SQL{Where: where, Args: c.args}, nil
}

func (c *compiler) param(v any) string {
	c.args = append(c.args, v)
	return "?" + strconv.Itoa(len(c.args))
}

func (c *compiler) newAlias(prefix string) string {
	c.n++
	return "_" + prefix + strconv.Itoa(c.n)
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func (c *compiler) expr(e Expr) (string, error) {
	switch x := e.(type) {
	case *Logical:
		l, err := c.expr(x.Left)
		if err != nil {
			return "", err
		}
		r, err := c.expr(x.Right)
		if err != nil {
			return "", err
		}
		op := " AND "
		if x.Op == Or {
			op = " OR "
		}
		return "(" + l + op + r + ")", nil
	case *Compare:
		where, err := c.compare(x)
		return where, at(err, PosOf(x.Left))
	}
	return "", compileErr("unknown expression")
}

// operand is a compiled operand.
type operand struct {
	kind  Kind
	ftype string // field type, for coercing constants (dates)
	sql   string // scalar expression, or the element expression of a set
	konst bool   // a constant: value in val, no SQL yet
	val   any
	// A set of elements (multiple fields, relations traversed, back-
	// relations, @collection): rows come from `FROM <from> WHERE <where>`.
	multi bool
	from  string
	where string
	each  bool
	// A value inside a JSON column of the current row (no joins): the
	// column and path, so ?= and :each can iterate its elements.
	jsonCol, jsonPath string
	// guest marks a guest's @request.auth value: "" in comparisons, and
	// NULL against the null literal.
	guest bool
}

func (o *operand) isNull() bool  { return o.konst && o.val == nil }
func (o *operand) isEmpty() bool { return o.konst && o.val == "" }

func (o *operand) rows() string {
	s := " FROM " + o.from
	if o.where != "" {
		s += " WHERE " + o.where
	}
	return s
}

func (c *compiler) compare(cmp *Compare) (string, error) {
	l, err := c.operand(cmp.Left)
	if err != nil {
		return "", err
	}
	r, err := c.operand(cmp.Right)
	if err != nil {
		return "", err
	}
	if r.multi {
		return "", compileErr("a multi-valued operand must be on the left of %s", cmp.Op)
	}
	if r.each {
		return "", compileErr(":each belongs on the left operand")
	}
	guestVsNull(&l.val, l.guest, r.isNull())
	guestVsNull(&r.val, r.guest, l.isNull())
	// Constants take the kind of the other side.
	if r.konst && !l.konst {
		r.val = coerce(l.kind, l.ftype, r.val)
	}
	if l.konst && !r.konst {
		l.val = coerce(r.kind, r.ftype, l.val)
	}
	if l.konst && r.konst {
		l.val, r.val = coerce(kindAny, "", l.val), coerce(kindAny, "", r.val)
	}
	if cmp.Op.Base == "~" || cmp.Op.Base == "!~" {
		if err := checkLike(cmp.Op, l.kind, r.kind, r.konst, r.val); err != nil {
			return "", err
		}
	}
	if cmp.Op.Any && !l.multi && l.jsonCol != "" {
		c.jsonEach(l)
	}
	stripAffinity(l, r)
	if !l.multi {
		if l.each {
			return "", compileErr(":each needs a multiple field")
		}
		return c.scalar(l.sqlOf(c), l, cmp.Op.Base, r)
	}
	cond, err := c.scalar(l.sql, &operand{}, cmp.Op.Base, r)
	if err != nil {
		return "", err
	}
	exists := "EXISTS (SELECT 1" + l.rows() + ")"
	violating := "EXISTS (SELECT 1" + l.rows() + andWhere(l.where) + "COALESCE(" + cond + ", 0) = 0)"
	switch {
	case cmp.Op.Any:
		return "EXISTS (SELECT 1" + l.rows() + andWhere(l.where) + cond + ")", nil
	case l.each:
		return "(" + exists + " AND NOT " + violating + ")", nil
	}
	// Every element satisfies; an empty set counts as one null element.
	nullCond, err := c.scalar("NULL", &operand{}, cmp.Op.Base, r)
	if err != nil {
		return "", err
	}
	return "(CASE WHEN " + exists + " THEN NOT " + violating + " ELSE COALESCE(" + nullCond + ", 0) END)", nil
}

// checkLike refuses ~ and !~ on anything but text.
func checkLike(op Op, lk, rk Kind, rKonst bool, rv any) error {
	if lk == kindNumber {
		return compileErr("%s needs text on its left", op)
	}
	if _, isText := rv.(string); rk == kindNumber || rk == kindJSON || (rKonst && !isText) {
		return compileErr("%s needs text on its right", op)
	}
	return nil
}

// stripAffinity keeps SQLite from converting values before comparing: a
// column compared with a column, or with a constant of another class,
// loses its affinity (unary +), so comparisons follow storage classes
// exactly as the in-memory evaluator does. A column compared with a
// constant of its own class keeps it, and with it the use of an index.
func stripAffinity(l, r *operand) {
	switch {
	case !l.konst && !r.konst:
		l.sql, r.sql = "+"+l.sql, "+"+r.sql
	case r.konst && !l.konst && classOf(r.val) != l.kind:
		l.sql = "+" + l.sql
	case l.konst && !r.konst && classOf(l.val) != r.kind:
		r.sql = "+" + r.sql
	}
}

// classOf is the kind a constant compares as (kindAny for null).
func classOf(v any) Kind {
	switch v.(type) {
	case float64:
		return kindNumber
	case string:
		return kindText
	}
	return kindAny
}

func andWhere(where string) string {
	if where == "" {
		return " WHERE "
	}
	return " AND "
}

// sqlOf renders a scalar operand (a constant becomes a parameter).
func (o *operand) sqlOf(c *compiler) string {
	if o.konst {
		if o.val == nil {
			return "NULL"
		}
		return c.param(o.val)
	}
	return o.sql
}

// guestVsNull turns a guest's auth value into NULL when it meets the null
// literal, so `@request.auth.id = null` and `@request.auth.id != ""` both
// say "a guest".
func guestVsNull(v *any, guest, otherNull bool) {
	if guest && otherNull {
		*v = nil
	}
}

// scalar compares the scalar SQL expression l (described by lo) with r.
// `=` and `!=` against the null literal test NULL; otherwise NULL equals
// "" (an empty text and a missing value read alike).
func (c *compiler) scalar(l string, lo *operand, op string, r *operand) (string, error) {
	switch op {
	case "=", "!=":
		is := " IS "
		if op == "!=" {
			is = " IS NOT "
		}
		switch {
		case r.isNull():
			return "(" + l + is + "NULL)", nil
		case lo.isNull():
			return "(" + r.sqlOf(c) + is + "NULL)", nil
		case r.isEmpty() || lo.isEmpty() || (!lo.konst && !r.konst):
			return "(COALESCE(" + l + ", '')" + is + "COALESCE(" + r.sqlOf(c) + ", ''))", nil
		}
		return "(" + l + is + r.sqlOf(c) + ")", nil
	case ">", ">=", "<", "<=":
		return "(" + l + " " + op + " " + r.sqlOf(c) + ")", nil
	case "~", "!~":
		var pat string
		if r.konst {
			s, _ := r.val.(string)
			pat = c.param(likePattern(s))
		} else {
			pat = "('%' || " + r.sql + " || '%')"
		}
		like := "(typeof(" + l + ") = 'text' AND " + l + " LIKE " + pat + " ESCAPE '\\')"
		if op == "~" {
			return like, nil
		}
		return "COALESCE(NOT " + like + ", 0)", nil
	}
	return "", compileErr("unknown operator %q", op)
}

// operand compiles one operand; an error names the operand's position.
func (c *compiler) operand(o Operand) (*operand, error) {
	op, err := c.operandAt(o)
	return op, at(err, PosOf(o))
}

func (c *compiler) operandAt(o Operand) (*operand, error) {
	switch x := o.(type) {
	case *Literal:
		return &operand{kind: kindAny, konst: true, val: literalConst(x)}, nil
	case *Macro:
		return &operand{kind: kindNumber, konst: true, val: macroValue(x.Name, c.env.Now)}, nil
	case *Request:
		return c.request(x)
	case *Field:
		op, err := c.path(c.base, c.alias, x.Path, nil)
		if err != nil {
			return nil, err
		}
		return c.modify(op, x.Mods)
	case *CollectionRef:
		coll := c.r.FilterCollection(x.Name)
		if coll == nil || !c.env.reaches(coll) {
			// Out of reach reads as absent: a caller's filter learns
			// nothing of collections it cannot list.
			return nil, compileErr("unknown collection %q", x.Name)
		}
		a := c.newAlias("c")
		op, err := c.path(coll, a, x.Path, &operand{multi: true, from: quote(coll.Name) + " AS " + a})
		if err != nil {
			return nil, err
		}
		return c.modify(op, x.Mods)
	case *Call:
		return c.call(x)
	}
	return nil, compileErr("unknown operand")
}

// request resolves @request.* to a constant.
func (c *compiler) request(x *Request) (*operand, error) {
	v, present, err := requestValue(x, c.env)
	if err != nil {
		return nil, err
	}
	if x.Mods.Has("changed") {
		return c.changed(x, v, present)
	}
	return modifyConst(constOf(v), present, isGuestAuth(x, c.env), x.Mods)
}

// changed compiles `@request.body.<field>:changed`: the body carries the
// field and its value differs from the record's current one.
func (c *compiler) changed(x *Request, v any, present bool) (*operand, error) {
	if len(x.Path) != 2 || x.Path[0] != "body" {
		return nil, compileErr(":changed applies to @request.body.<field>")
	}
	if len(x.Mods) != 1 {
		return nil, compileErr(":changed cannot be combined with other modifiers")
	}
	if !present {
		return &operand{kind: kindAny, konst: true, val: false}, nil
	}
	f := c.base.Field(x.Path[1])
	if f == nil || f.Private {
		return &operand{kind: kindAny, konst: true, val: true}, nil
	}
	col := c.alias + "." + quote(f.Name)
	val := coerce(kindOf(f.Type), f.Type, constOf(v))
	p := "NULL"
	if val != nil {
		p = c.param(val)
	}
	return &operand{kind: kindNumber, sql: "(" + col + " IS NOT " + p + ")"}, nil
}

// path resolves a field path from coll (aliased a). in is the set the path
// starts in (nil for the base record).
func (c *compiler) path(coll *Collection, a string, path []string, in *operand) (*operand, error) {
	if len(path) > maxPathDepth {
		return nil, compileErr("path %q is deeper than %d", strings.Join(path, "."), maxPathDepth)
	}
	acc := &operand{}
	if in != nil {
		*acc = *in
	}
	for i := 0; i < len(path); i++ {
		seg := path[i]
		f := coll.Field(seg)
		if f == nil {
			target, field, ok := viaName(seg)
			if !ok {
				return nil, compileErr("unknown field %q", strings.Join(path[:i+1], "."))
			}
			next, b, err := c.backRelation(coll, a, target, field, acc)
			if err != nil {
				return nil, err
			}
			coll, a = next, b
			if i == len(path)-1 {
				acc.sql, acc.kind = b+".id", kindText
				return c.finish(acc), nil
			}
			continue
		}
		if msg := c.env.unreadable(f, strings.Join(path[:i+1], ".")); msg != "" {
			return nil, compileErr("%s", msg)
		}
		col := a + "." + quote(f.Name)
		last := i == len(path)-1
		switch {
		case last && f.Multiple:
			j := c.newAlias("j")
			acc.addFrom("json_each("+col+") AS "+j, "")
			acc.multi, acc.sql, acc.kind, acc.ftype = true, j+".value", kindText, f.Type
			return c.finish(acc), nil
		case last:
			acc.sql, acc.kind, acc.ftype = col, kindOf(f.Type), f.Type
			return c.finish(acc), nil
		case f.Type == schema.FieldJSON || f.Type == schema.FieldGeoPoint:
			return c.jsonPath(acc, col, path[i+1:])
		case f.Type == schema.FieldRelation:
			target := c.r.FilterCollection(f.Target)
			if target == nil {
				return nil, compileErr("relation %q has no target", seg)
			}
			if !c.env.reaches(target) {
				return nil, compileErr("relation %q leads to a collection that is not readable here", seg)
			}
			b := c.newAlias("r")
			if f.Multiple {
				j := c.newAlias("j")
				acc.addFrom("json_each("+col+") AS "+j, "")
				acc.addFrom(quote(target.Name)+" AS "+b, b+".id = "+j+".value")
				acc.multi = true
			} else {
				acc.addFrom(quote(target.Name)+" AS "+b, b+".id = "+col)
			}
			coll, a = target, b
		default:
			return nil, compileErr("field %q has no member %q", seg, path[i+1])
		}
	}
	return nil, compileErr("empty path")
}

func (o *operand) addFrom(item, cond string) {
	if o.from == "" {
		o.from = item
	} else {
		o.from += " JOIN " + item + " ON 1"
	}
	if cond != "" {
		if o.where == "" {
			o.where = cond
		} else {
			o.where += " AND " + cond
		}
	}
}

// finish turns a single-valued chain of joins into a scalar subquery.
func (c *compiler) finish(o *operand) *operand {
	if o.multi || o.from == "" {
		return o
	}
	o.sql = "(SELECT " + o.sql + o.rows() + " LIMIT 1)"
	o.from, o.where = "", ""
	return o
}

// backRelation joins the records of collection target whose relation field
// points at the current record.
func (c *compiler) backRelation(coll *Collection, a, targetName, fieldName string, acc *operand) (*Collection, string, error) {
	target := c.r.FilterCollection(targetName)
	if target == nil || !c.env.reaches(target) {
		// Out of reach reads as absent, as for @collection.
		return nil, "", compileErr("unknown collection %q in back-relation", targetName)
	}
	f := target.Field(fieldName)
	if f == nil || f.Type != schema.FieldRelation || f.Target != coll.ID || f.Private || (f.Hidden && !c.env.AllowHidden) {
		return nil, "", compileErr("%s.%s is not a relation to %s", targetName, fieldName, coll.Name)
	}
	b := c.newAlias("v")
	col := b + "." + quote(f.Name)
	cond := col + " = " + a + ".id"
	if f.Multiple {
		cond = "EXISTS (SELECT 1 FROM json_each(" + col + ") WHERE value = " + a + ".id)"
	}
	acc.addFrom(quote(target.Name)+" AS "+b, cond)
	acc.multi = true
	return target, b, nil
}

// jsonPath reads a value inside a JSON field.
func (c *compiler) jsonPath(acc *operand, col string, rest []string) (*operand, error) {
	p := jsonPathString(rest)
	acc.sql = "json_extract(" + col + ", " + c.param(p) + ")"
	acc.kind = kindJSON
	acc.ftype = schema.FieldJSON
	if acc.from == "" {
		acc.jsonCol, acc.jsonPath = col, p
	}
	return c.finish(acc), nil
}

// jsonPathString renders path segments as an SQLite JSON path: digits
// index arrays, anything else is a quoted object key.
func jsonPathString(segs []string) string {
	var b strings.Builder
	b.WriteString("$")
	for _, s := range segs {
		if isAllDigits(s) {
			b.WriteString("[" + s + "]")
		} else {
			b.WriteString(`."` + s + `"`)
		}
	}
	return b.String()
}

func isAllDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// modify applies modifiers to a field operand.
func (c *compiler) modify(o *operand, mods Modifiers) (*operand, error) {
	for _, m := range mods {
		switch m {
		case "lower":
			if o.kind == kindNumber {
				return nil, compileErr(":lower needs a text field")
			}
			o.sql, o.kind = "lower(CASE WHEN typeof("+o.sql+") = 'text' THEN "+o.sql+" END)", kindText
			o.jsonCol = ""
		case "length":
			switch {
			case o.multi:
				o.sql = "(SELECT count(*)" + o.rows() + ")"
				o.multi, o.from, o.where = false, "", ""
			case o.kind == kindText:
				o.sql = "COALESCE(length(" + o.sql + "), 0)"
			case o.kind == kindJSON && o.jsonCol != "":
				o.sql = "COALESCE(json_array_length(" + o.jsonCol + ", " + c.param(o.jsonPath) + "), 0)"
			default:
				return nil, compileErr(":length needs text, a multiple field or a JSON array")
			}
			o.kind, o.ftype, o.jsonCol = kindNumber, schema.FieldNumber, ""
		case "each":
			if o.kind == kindJSON && o.jsonCol != "" && !o.multi {
				c.jsonEach(o)
			}
			o.each = true
		default:
			return nil, compileErr(":%s does not apply to a field", m)
		}
	}
	return o, nil
}

// jsonEach turns a JSON value into the set of its elements.
func (c *compiler) jsonEach(o *operand) {
	j := c.newAlias("j")
	o.from = "json_each(" + o.jsonCol + ", " + c.param(o.jsonPath) + ") AS " + j
	o.where = ""
	o.sql, o.multi = j+".value", true
}
