// Package scheduler owns leader-only work. One loop watches leadership and
// switches every subsystem on when this node becomes leader and off when it
// stops leading (the shape of Nomad's establishLeadership and
// revokeLeadership). Its subsystems: the internal-schema migrator and the
// workflow executor (workflows.go); jobs, queues, webhook dispatch and
// pruning join them as they are built.
package scheduler
