package queue

import (
	"errors"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// A job's schedule is a cron expression in UTC: five fields (minute,
// hour, day of month, month, day of week), as robfig/cron reads them
// (names, ranges, steps and lists; no descriptors such as @daily, no time
// zone prefix). With the setting jobs.cron_seconds on, a six-field form
// whose first field is seconds is accepted too (tests and demos); a job
// saved with it keeps its schedule if the setting is turned off later.

var (
	fiveFields = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)
	sixFields  = cron.NewParser(cron.Second | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)
)

// parseSchedule reads expr; secondsAllowed admits the six-field form.
func parseSchedule(expr string, secondsAllowed bool) (cron.Schedule, error) {
	expr = strings.TrimSpace(expr)
	if strings.HasPrefix(expr, "@") || strings.Contains(expr, "TZ=") {
		return nil, errors.New("must be a cron expression of five fields (minute hour day-of-month month day-of-week), in UTC")
	}
	switch n := len(strings.Fields(expr)); {
	case n == 5:
		return fiveFields.Parse(expr)
	case n == 6 && secondsAllowed:
		return sixFields.Parse(expr)
	case n == 6:
		return nil, errors.New("must have five fields (minute hour day-of-month month day-of-week); six, with seconds first, only with the setting jobs.cron_seconds")
	}
	return nil, errors.New("must be a cron expression of five fields (minute hour day-of-month month day-of-week), in UTC")
}

// schedule is a stored job's schedule (always readable: it was checked
// when saved).
func schedule(expr string) (cron.Schedule, error) { return parseSchedule(expr, true) }

// nextAfter is the first time of s strictly after t, in UTC (zero when
// the schedule never fires again).
func nextAfter(s cron.Schedule, t time.Time) time.Time { return s.Next(t.UTC()) }
