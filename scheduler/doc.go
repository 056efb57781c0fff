// Package scheduler owns leader-only work. One loop watches leadership and
// switches every subsystem on when this node becomes leader and off when it
// stops leading (the shape of Nomad's establishLeadership and
// revokeLeadership). Today its only subsystem is the internal-schema
// migrator; jobs, queues, workflow timers, webhook dispatch and pruning join
// it as they are built.
package scheduler
