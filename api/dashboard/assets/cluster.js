// cluster.js: the members of the cluster as this node sees them (state,
// liveness, region, applied index, lag, last contact), polled every two
// seconds, and a leadership transfer behind a confirmation; owners also
// get the operations of clusterops.js (add, remove, snapshot).
import { call, can } from "./api.js";
import { h, mount, field, alertBox, describeError } from "./ui.js";
import { clusterOps } from "./clusterops.js";

const POLL_MS = 2000;

// known shows a member's figure, or a dash when the member did not answer.
const known = (m, v) => (m.http_addr || m.status === "alive" ? String(v) : "—");

export async function clusterPage() {
  const summary = h("p", { class: "status", role: "status" });
  const table = h("div", { class: "table-wrap" });
  const err = alertBox();
  const transfer = h("div", {});
  const outcome = h("p", { role: "status", class: "status" });
  let last = null;

  const draw = (c) => {
    summary.textContent = "This node: " + c.node_id + " (" + c.state + ") · leader " + (c.leader_id || "none") +
      " · term " + c.term + " · commit index " + c.commit_index;
    const members = [...c.members].sort((a, b) => a.id.localeCompare(b.id));
    mount(table, h("table", { id: "members" }, h("caption", {}, members.length + " members"),
      h("thead", {}, h("tr", {}, ["Member", "State", "Status", "Region", "Suffrage", "Applied index", "Lag", "Last contact", "HTTP address"]
        .map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, members.map((m) => h("tr", { "data-member": m.id, "data-status": m.status },
        h("td", {}, m.id), h("td", {}, m.id === c.leader_id ? "leader" : m.suffrage === "voter" ? "follower" : "replica"),
        h("td", {}, h("span", { class: "status-" + m.status }, m.status)), h("td", {}, m.region || ""),
        h("td", {}, m.suffrage), h("td", {}, known(m, m.applied_index)), h("td", {}, known(m, m.lag)),
        h("td", {}, m.id === c.node_id ? "self" : m.http_addr ? m.last_contact_ms + " ms" : "no answer"),
        h("td", {}, m.http_addr || ""))))));
    const targets = members.filter((m) => m.suffrage === "voter" && m.id !== c.leader_id && m.status === "alive").map((m) => m.id);
    const key = targets.join(",") + "|" + c.leader_id;
    if (can("owner") && key !== last) { last = key; drawTransfer(targets); }
    if (ops) ops.update(c);
  };

  const drawTransfer = (targets) => {
    if (targets.length === 0) { mount(transfer, h("p", {}, "No other live voter to hand leadership to.")); return; }
    const to = h("select", { name: "transfer_to" }, targets.map((t) => h("option", { value: t }, t)));
    const box = h("div", { class: "bar" });
    const ask = () => mount(box,
      h("span", {}, "Hand leadership to " + to.value + "? Writes pause briefly."),
      h("button", { type: "button", class: "danger", onclick: async (e) => {
        e.target.disabled = true;
        const r = await call("POST", "/api/v1/admin/cluster/leadership", { id: to.value });
        if (!r.ok) err.set(describeError(r)); else err.set("");
        outcome.textContent = r.ok ? "Leadership moved to " + r.data.leader_id + "." : "";
        last = null;
        mount(box, h("button", { type: "button", onclick: ask }, "Transfer leadership"));
        poll();
      } }, "Confirm transfer"),
      h("button", { type: "button", onclick: () => mount(box, h("button", { type: "button", onclick: ask }, "Transfer leadership")) }, "Cancel"));
    mount(box, h("button", { type: "button", onclick: ask }, "Transfer leadership"));
    mount(transfer, h("h2", {}, "Leadership"), field("New leader", to), box);
    to.addEventListener("change", () => mount(box, h("button", { type: "button", onclick: ask }, "Transfer leadership")));
  };

  const ops = can("owner") ? clusterOps(() => poll()) : null;
  let stopped = false;
  let timer = null;
  const poll = async () => {
    clearTimeout(timer);
    const res = await call("GET", "/api/v1/admin/cluster");
    if (stopped) return;
    if (res.ok) { draw(res.data); if (!err.textContent.startsWith("4")) err.set(""); } else err.set(describeError(res));
    timer = setTimeout(poll, POLL_MS);
  };
  await poll();
  return {
    node: h("section", {}, h("h1", {}, "Cluster"), summary, err, table, transfer, outcome, ops ? ops.node : null),
    cleanup: () => { stopped = true; clearTimeout(timer); },
  };
}
