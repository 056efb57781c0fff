package realtime

import (
	"fmt"
	"strings"

	"svcd/engine/filter"
)

// LabelledSub is one subscription delivered under its own label: several
// of them may share a topic with different filters, and each event is
// delivered once per labelled subscription it passes (PocketBase's
// realtime, where the event name is the subscription string).
type LabelledSub struct {
	// Label names the subscription's events (Message.Label); labels are
	// unique on a connection.
	Label string
	// Topic is one of the topic forms parseTopic reads.
	Topic string
	// Filter narrows the events (svcd's filter language; "" for all).
	Filter string
}

// ReplaceLabelled sets the subscriptions to exactly subs (an empty list
// unsubscribes all). Nothing changes when a topic or filter is invalid.
// Unlike the other subscriptions, a labelled one receives deletes with
// the record as it was (Message.Record).
func (c *Conn) ReplaceLabelled(subs []LabelledSub) *Error {
	next := make([]sub, 0, len(subs))
	seen := map[string]bool{}
	for _, ls := range subs {
		if seen[ls.Label] {
			continue
		}
		seen[ls.Label] = true
		t, ok := parseTopic(ls.Topic, c.hub.opts.Auth.Collection)
		if !ok || t.flags {
			return &Error{CodeInvalidTopics, "invalid topics: " + fmt.Sprintf("%q", ls.Topic)}
		}
		s := sub{t: t, key: ls.Label, label: ls.Label, fText: ls.Filter}
		if strings.TrimSpace(ls.Filter) != "" {
			if len(ls.Filter) > MaxFilterLen {
				return &Error{CodeTooLarge, fmt.Sprintf("filter longer than %d characters", MaxFilterLen)}
			}
			f, err := filter.Parse(ls.Filter)
			if err != nil {
				return &Error{CodeInvalidFilter, err.Error()}
			}
			s.f = f
		}
		next = append(next, s)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if max := c.hub.opts.MaxSubscriptions; len(next) > max {
		return &Error{CodeTooLarge, fmt.Sprintf("too many subscriptions (at most %d per connection)", max)}
	}
	c.setSubsLocked(next)
	return nil
}

// labelled is ev's message for the labelled subscription label: the
// record as view renders it, for a delete too (the row as it was).
func labelled(ev *Event, view View, label string) Message {
	return Message{Type: ev.Action, EventID: ev.ID(), Collection: ev.Collection,
		ID: ev.RecordID, Record: view.JSON(), Label: label}
}
