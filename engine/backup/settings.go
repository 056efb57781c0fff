package backup

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/robfig/cron/v3"

	"svcd/engine"
)

// Settings of scheduled backups (docs/operations.md "Scheduled backups").
const (
	// settingSchedule is when: a cron expression of five fields (minute
	// hour day month weekday, UTC) or a descriptor (@hourly, @daily,
	// @every 6h); empty: no scheduled backups.
	settingSchedule = "backup.schedule"
	// settingTo is where: a directory on the leader's machine, or
	// s3://bucket/prefix.
	settingTo = "backup.to"
	// settingKeep is how many scheduled backups the destination keeps (the
	// newest); 0 keeps them all.
	settingKeep = "backup.keep"
	// settingGzip compresses the files (.db.gz).
	settingGzip = "backup.gzip"
)

func (b *Backups) registerSettings() {
	b.core.DefineSettings(
		engine.SettingDef{Key: settingSchedule, Default: "", Validate: func(v string) string {
			if _, err := parseSchedule(v); err != nil {
				return err.Error()
			}
			return ""
		}},
		engine.SettingDef{Key: settingTo, Default: "", Validate: func(v string) string {
			if strings.HasPrefix(v, "s3://") && s3Bucket(v) == "" {
				return "an S3 destination is s3://bucket or s3://bucket/prefix"
			}
			if !strings.Contains(v, "://") && !strings.HasPrefix(v, "/") {
				return "a directory must be an absolute path (or use s3://bucket/prefix)"
			}
			if strings.Contains(v, "://") && !strings.HasPrefix(v, "s3://") {
				return "a destination is an absolute directory or s3://bucket/prefix"
			}
			return ""
		}},
		engine.SettingDef{Key: settingKeep, Default: "7", Validate: func(v string) string {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err != nil || n < 0 {
				return "must be a whole number, 0 or more (0 keeps every backup)"
			}
			return ""
		}},
		engine.SettingDef{Key: settingGzip, Default: "0"},
	)
}

// scheduleParser reads five-field cron expressions and descriptors.
var scheduleParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// parseSchedule parses backup.schedule (UTC).
func parseSchedule(v string) (cron.Schedule, error) {
	v = strings.TrimSpace(v)
	if !strings.HasPrefix(v, "@") {
		v = "CRON_TZ=UTC " + v
	}
	s, err := scheduleParser.Parse(v)
	if err != nil {
		return nil, fmt.Errorf("not a schedule (five cron fields, UTC, or @hourly, @daily, @every 6h): %v", err)
	}
	return s, nil
}

// s3Bucket is the bucket of an s3:// destination ("" when there is none).
func s3Bucket(to string) string {
	rest := strings.TrimPrefix(to, "s3://")
	bucket, _, _ := strings.Cut(rest, "/")
	return bucket
}

// scheduled is the schedule in force (nil: none) and the destination.
func (b *Backups) scheduled() (cron.Schedule, string, error) {
	sched, to := strings.TrimSpace(b.core.Setting(settingSchedule)), strings.TrimSpace(b.core.Setting(settingTo))
	if sched == "" || to == "" {
		return nil, to, nil
	}
	s, err := parseSchedule(sched)
	return s, to, err
}

// keep is backup.keep.
func (b *Backups) keep() int {
	n, err := strconv.Atoi(strings.TrimSpace(b.core.Setting(settingKeep)))
	if err != nil || n < 0 {
		return 7
	}
	return n
}
