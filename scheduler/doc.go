// Package scheduler owns leader-only work. One loop watches leadership and
// switches every subsystem on when this node becomes leader and off when it
// stops leading (the shape of Nomad's establishLeadership and
// revokeLeadership). Its subsystems: the internal-schema migrator; the job
// firer (cron.go), the queue dispatcher (dispatch.go) and the reaper
// (reaper.go) of the queue module; the webhook dispatcher (webhooks.go);
// the workflow executor (workflows.go); pruning joins them when built.
//
// A subsystem decides when to propose; the state machine decides what a
// proposal does, from the database alone. So a subsystem needs no state of
// its own across leaders: a new leader reads the replica and resumes (a
// firing already committed is refused, a claim that still stands is not
// taken again, an expired one is released by the reaper). Subsystems drive
// the domain through the small interfaces declared here (QueueWork,
// CronWork, Reaping, CodeRunner, ...); the composition root adapts the modules
// to them.
package scheduler
