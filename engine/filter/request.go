package filter

import (
	"strings"
	"time"

	"svcd/fsm"
)

// requestValue looks up @request.<path> in env: the value and whether the
// request carried it.
func requestValue(x *Request, env *Env) (any, bool, error) {
	switch x.Path[0] {
	case "method":
		return env.Method, env.Method != "", nil
	case "context":
		ctx := env.Context
		if ctx == "" {
			ctx = "default"
		}
		return ctx, true, nil
	case "auth":
		if len(x.Path) > 2 {
			return nil, false, compileErr("@request.auth.%s: only the auth record's own fields can be read", strings.Join(x.Path[1:], "."))
		}
		if len(x.Path) == 2 && !env.knowsAuthField(x.Path[1]) {
			// Checked before the caller is looked at: the rule is
			// invalid for everyone, guests included.
			return nil, false, compileErr("unknown field %q of @request.auth (no auth collection has it)", x.Path[1])
		}
		if env.Auth == nil {
			// A guest's auth fields read as empty text, so both
			// `@request.auth.id != ""` and `@request.auth.id = ""` say
			// what they look like they say.
			return "", false, nil
		}
		if len(x.Path) == 1 {
			v, ok := env.Auth["id"]
			return v, ok, nil
		}
		v, ok := env.Auth[x.Path[1]]
		return v, ok, nil
	case "headers":
		key := strings.ReplaceAll(strings.ToLower(strings.Join(x.Path[1:], ".")), "-", "_")
		v, ok := env.Headers[key]
		return v, ok, nil
	case "query":
		v, ok := env.Query[strings.Join(x.Path[1:], ".")]
		return v, ok, nil
	case "body":
		if len(x.Path) != 2 {
			return nil, false, compileErr("@request.body.%s: only top-level body keys can be read", strings.Join(x.Path[1:], "."))
		}
		v, ok := env.Body[x.Path[1]]
		return v, ok, nil
	}
	return nil, false, compileErr("unknown @request member %q", x.Path[0])
}

// isGuestAuth reports whether x reads the auth record of a guest.
func isGuestAuth(x *Request, env *Env) bool { return x.Path[0] == "auth" && env.Auth == nil }

// modifyConst applies modifiers to a request value.
func modifyConst(v any, present, guest bool, mods Modifiers) (*operand, error) {
	o := &operand{kind: kindAny, konst: true, val: v, guest: guest}
	for _, m := range mods {
		switch m {
		case "isset":
			o.val, o.kind, o.guest = present, kindNumber, false
		case "lower":
			if s, ok := o.val.(string); ok {
				o.val = asciiLower(s)
			}
		case "length":
			o.val, o.kind, o.guest = float64(constLength(o.val)), kindNumber, false
		case "each":
			return nil, compileErr(":each does not apply to @request values")
		default:
			return nil, compileErr(":%s does not apply to @request values", m)
		}
	}
	if b, ok := o.val.(bool); ok && o.kind == kindNumber {
		o.val = map[bool]float64{true: 1, false: 0}[b]
	}
	return o, nil
}

// constLength is the length of a request value: elements of a JSON array,
// characters of a string, 0 otherwise.
func constLength(v any) int {
	s, ok := v.(string)
	if !ok {
		return 0
	}
	if strings.HasPrefix(s, "[") {
		if elems, ok := jsonElements(s); ok {
			return len(elems)
		}
	}
	return len([]rune(s))
}

// macroValue is the value of a datetime macro at now (UTC): unix seconds
// for instants, numbers for calendar parts.
func macroValue(name string, now time.Time) float64 {
	t := now.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	month := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	year := time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	var v int64
	switch name {
	case "now":
		v = t.Unix()
	case "second":
		v = int64(t.Second())
	case "minute":
		v = int64(t.Minute())
	case "hour":
		v = int64(t.Hour())
	case "weekday":
		v = int64(t.Weekday())
	case "day":
		v = int64(t.Day())
	case "month":
		v = int64(t.Month())
	case "year":
		v = int64(t.Year())
	case "todayStart":
		v = day.Unix()
	case "todayEnd":
		v = day.AddDate(0, 0, 1).Unix() - 1
	case "monthStart":
		v = month.Unix()
	case "monthEnd":
		v = month.AddDate(0, 1, 0).Unix() - 1
	case "yearStart":
		v = year.Unix()
	case "yearEnd":
		v = year.AddDate(1, 0, 0).Unix() - 1
	case "yesterday":
		v = t.Unix() - 86400
	case "tomorrow":
		v = t.Unix() + 86400
	}
	return float64(v)
}

// call compiles geoDistance and strftime through the SQL functions the
// state machine registers (fsm/functions.go), which the in-memory
// evaluator calls directly.
func (c *compiler) call(x *Call) (*operand, error) {
	args := make([]string, len(x.Args))
	for i, a := range x.Args {
		o, err := c.operand(a)
		if err != nil {
			return nil, err
		}
		if o.multi {
			return nil, compileErr("%s takes single values", x.Name)
		}
		if o.konst {
			want := kindNumber
			if x.Name == "strftime" && i == 0 {
				want = kindText
			}
			o.val = coerce(want, "", o.val)
		}
		args[i] = o.sqlOf(c)
	}
	switch x.Name {
	case "geoDistance":
		return &operand{kind: kindNumber, sql: "svc_geo_distance(" + strings.Join(args, ", ") + ")"}, nil
	case "strftime":
		format := x.Args[0].(*Literal).Str
		if err := checkStrftime(format); err != nil {
			return nil, err
		}
		return &operand{kind: kindText, sql: "svc_strftime(" + args[0] + ", " + args[1] + ")"}, nil
	}
	return nil, compileErr("unknown function %q", x.Name)
}

func checkStrftime(format string) error {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		if i+1 >= len(format) || !strings.ContainsRune(fsm.StrftimeVerbs, rune(format[i+1])) {
			return compileErr("strftime supports %%d %%H %%j %%m %%M %%S %%s %%u %%w %%W %%Y and %%%%")
		}
		i++
	}
	return nil
}
