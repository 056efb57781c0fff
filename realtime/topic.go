package realtime

import (
	"regexp"
	"strings"
)

// Topic is a canonical subscription topic.
type topic struct {
	coll   string // canonical collection name; "" for * and *.<action>
	id     string // <collection>/<id>
	action string // create, update, delete; "" for any
	flags  bool   // the __flags topic: flag and segment changes
}

// FlagsTopic carries flag and segment changes; record topics, * included,
// never match them.
const FlagsTopic = "__flags"

func (t topic) String() string {
	switch {
	case t.flags:
		return FlagsTopic
	case t.coll == "" && t.action == "":
		return "*"
	case t.coll == "":
		return "*." + t.action
	case t.id != "":
		return t.coll + "/" + t.id
	case t.action != "":
		return t.coll + "." + t.action
	}
	return t.coll
}

// matches reports whether an event of kind action on record id of
// collection coll falls under t.
func (t topic) matches(ev *Event) bool {
	if t.flags || ev.Flag != nil {
		return t.flags && ev.Flag != nil
	}
	if t.coll != "" && t.coll != ev.Collection {
		return false
	}
	if t.action != "" && t.action != ev.Action {
		return false
	}
	return t.id == "" || t.id == ev.RecordID
}

var (
	collName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,62}$`)
	recordID = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)
)

func isAction(s string) bool { return s == "create" || s == "update" || s == "delete" }

// parseTopic canonicalizes one topic: the collection as the schema spells
// it (resolve answers "" for an unknown collection), the action in lower
// case. The forms are <collection>, <collection>/<id>,
// <collection>.<action>, * and *.<action>.
func parseTopic(s string, resolve func(string) string) (topic, bool) {
	s = strings.TrimSpace(s)
	if s == "*" {
		return topic{}, true
	}
	if s == FlagsTopic {
		return topic{flags: true}, true
	}
	if a, ok := strings.CutPrefix(s, "*."); ok {
		a = strings.ToLower(a)
		return topic{action: a}, isAction(a)
	}
	var t topic
	name := s
	if c, id, ok := strings.Cut(s, "/"); ok {
		if !recordID.MatchString(id) {
			return topic{}, false
		}
		name, t.id = c, id
	} else if c, a, ok := strings.Cut(s, "."); ok {
		a = strings.ToLower(a)
		if !isAction(a) {
			return topic{}, false
		}
		name, t.action = c, a
	}
	if !collName.MatchString(name) {
		return topic{}, false
	}
	t.coll = resolve(name)
	return t, t.coll != ""
}
