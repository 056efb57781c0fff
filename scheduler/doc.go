// Package scheduler owns leader-only work. One loop watches leadership and
// switches every subsystem on when this node becomes leader and off when it
// stops leading (the shape of Nomad's establishLeadership and
// revokeLeadership). Its subsystems are the internal-schema migrator and
// the webhook dispatcher (webhooks.go); jobs, queues, workflow timers and
// pruning join them as they are built.
package scheduler
