// clusterops.js: the cluster page's operations, for owners: add a member
// (a non-voting replica unless "voter" is ticked), remove one, take a Raft
// snapshot of this node. Each asks before acting; the server's answer
// (its error and details, e.g. the leader a membership change needs) is
// shown as it comes. The controls live outside the polled members table,
// so a confirmation is not redrawn away by the next poll.
import { call } from "./api.js";
import { h, mount, field, alertBox, describeError, confirmButton } from "./ui.js";

/**
 * clusterOps returns {node, update}: update(c) takes each polled cluster
 * state and redraws the remove picker when the member list changes;
 * refresh is called after a change so the table catches up at once.
 */
export function clusterOps(refresh) {
  const err = alertBox();
  const outcome = h("p", { role: "status", class: "status", id: "cluster-outcome" });
  const done = (res, msg) => {
    if (!res.ok) { err.set(describeError(res)); outcome.textContent = ""; return; }
    err.set(""); outcome.textContent = msg(res.data);
    refresh();
  };

  const id = h("input", { type: "text", name: "member_id", autocomplete: "off" });
  const addr = h("input", { type: "text", name: "member_raft_addr", autocomplete: "off", placeholder: "host:port" });
  const voter = h("input", { type: "checkbox", name: "member_voter" });
  const add = confirmButton("Add member", "Confirm add", async () => {
    const body = { id: id.value.trim(), raft_addr: addr.value.trim(), voter: voter.checked };
    done(await call("POST", "/api/v1/admin/cluster/members", body),
      (d) => "Added " + d.id + " (" + (d.voter ? "voter" : "non-voter") + ").");
  });

  const removeBox = h("div", {});
  let lastMembers = null;
  const update = (c) => {
    const others = c.members.map((m) => m.id).filter((m) => m !== c.node_id).sort();
    const key = others.join(",");
    if (key === lastMembers) return;
    lastMembers = key;
    if (others.length === 0) { mount(removeBox, h("p", {}, "No other member to remove.")); return; }
    const which = h("select", { name: "remove_member" }, others.map((m) => h("option", { value: m }, m)));
    mount(removeBox, field("Member to remove", which, "It leaves the Raft configuration; removing a voter changes the quorum."),
      confirmButton("Remove member", "Confirm remove", async () => {
        const m = which.value;
        const res = await call("DELETE", "/api/v1/admin/cluster/members/" + encodeURIComponent(m));
        done(res, () => "Removed " + m + ".");
      }));
  };

  const snapshot = confirmButton("Take snapshot", "Confirm snapshot", async () => {
    done(await call("POST", "/api/v1/admin/cluster/snapshot"),
      (d) => "Snapshot taken at index " + d.index + " (term " + d.term + ", " + d.size + " bytes).");
  });

  const node = h("section", { "aria-labelledby": "ops-h" },
    h("h2", { id: "ops-h" }, "Operations"),
    h("fieldset", {}, h("legend", {}, "Add a member"),
      h("p", { class: "hint" }, "The node must already run with the cluster's key; sent to the leader."),
      field("Member id", id), field("Raft address", addr), field("Voter (unticked: a non-voting replica)", voter), add),
    h("fieldset", {}, h("legend", {}, "Remove a member"), removeBox),
    h("fieldset", {}, h("legend", {}, "Snapshot"),
      h("p", { class: "hint" }, "This node writes a Raft snapshot of its state now."), snapshot),
    err, outcome);
  return { node, update };
}
