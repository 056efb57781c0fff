// The official PocketBase JavaScript SDK (npm pocketbase, pinned 0.28.1)
// against a three-node svcd cluster, its calls unchanged: what an app
// written for PocketBase does. Run by api/pocketbase_sdk_test.go:
//
//   node sdk.mjs URL1 URL2 URL3 SUPERUSER_EMAIL SUPERUSER_PASSWORD
//
// from a directory whose node_modules holds pocketbase@0.28.1 and
// eventsource@4.1.1 (the test links .ci/run's install there). Each step
// prints "ok NAME" or "FAIL NAME: why"; the last line is "N passed, M
// failed" and the exit status is 1 when a step failed.
import PocketBase from "pocketbase";
import { EventSource } from "eventsource";

globalThis.EventSource = EventSource; // the SDK's README: Node needs a polyfill

const [url1, url2, url3, suEmail, suPassword] = process.argv.slice(2);

let passed = 0, failed = 0;
async function step(name, fn) {
  try {
    await fn();
    passed++;
    console.log("ok " + name);
  } catch (e) {
    failed++;
    const why = e && e.response ? JSON.stringify({ status: e.status, response: e.response }) : String(e && e.stack || e);
    console.log("FAIL " + name + ": " + why.replace(/\n/g, " | "));
  }
}
function check(cond, msg) { if (!cond) throw new Error(msg); }
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const su = new PocketBase(url1);   // the superuser, on node 1
const su2 = new PocketBase(url2);  // the same superuser's token, on node 2
const user = new PocketBase(url2); // a user, on node 2
const password = "correct horse battery staple";
let users, posts, alice, created = [];

await step("superuser auth-with-password", async () => {
  const auth = await su.collection("_superusers").authWithPassword(suEmail, suPassword);
  check(auth.token && su.authStore.isValid, "no token");
  check(su.authStore.isSuperuser, "authStore.isSuperuser is false: " + JSON.stringify(su.authStore.record));
  su2.authStore.save(su.authStore.token, su.authStore.record);
});

await step("create collections", async () => {
  users = await su.collections.create({
    name: "members", type: "auth",
    fields: [{ name: "name", type: "text", max: 100 }],
    listRule: "id = @request.auth.id", viewRule: "id = @request.auth.id",
    createRule: "", updateRule: "id = @request.auth.id", deleteRule: null,
  });
  check(users.id && users.type === "auth", "members: " + JSON.stringify(users));
  posts = await su.collections.create({
    name: "posts", type: "base",
    fields: [
      { name: "title", type: "text", required: true },
      { name: "views", type: "number" },
      { name: "author", type: "relation", collectionId: users.id, maxSelect: 1 },
      { name: "cover", type: "file", maxSelect: 1, maxSize: 1048576 },
    ],
    listRule: "", viewRule: "", createRule: "@request.auth.id != ''",
    updateRule: "author = @request.auth.id", deleteRule: "author = @request.auth.id",
  });
  check(posts.name === "posts" && posts.listRule === "" && Array.isArray(posts.fields), "posts: " + JSON.stringify(posts));
  let got;
  try {
    got = await su2.collections.getOne("posts");
  } catch (e) {
    throw new Error("node 2 reading posts: " + JSON.stringify(e.response));
  }
  check(got.id === posts.id, "node 2 does not see posts");
});

await step("sign up and auth-with-password", async () => {
  alice = await user.collection("members").create({ email: "alice@example.com", password, passwordConfirm: password, name: "Alice" });
  check(alice.id && alice.collectionName === "members", "create: " + JSON.stringify(alice));
  const auth = await user.collection("members").authWithPassword("alice@example.com", password);
  check(auth.record.id === alice.id && user.authStore.isValid && !user.authStore.isSuperuser, "auth: " + JSON.stringify(auth));
});

await step("auth-refresh", async () => {
  const before = user.authStore.token;
  await sleep(1100); // a new token differs in its issue time
  const auth = await user.collection("members").authRefresh();
  check(auth.token && auth.record.email === "alice@example.com", "refresh: " + JSON.stringify(auth));
  check(user.authStore.token === auth.token && auth.token !== before, "the store keeps the old token");
});

await step("create records", async () => {
  for (let i = 1; i <= 5; i++) {
    created.push(await user.collection("posts").create({ title: "post " + i, views: i * 10, author: alice.id }));
  }
  const r = created[0];
  check(r.collectionName === "posts" && r.collectionId === posts.id, "record shape: " + JSON.stringify(r));
  check(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z$/.test(r.created), "created date " + r.created);
});

await step("list with filter, sort, expand and paging", async () => {
  const page1 = await user.collection("posts").getList(1, 2, { filter: "views >= 20", sort: "-views", expand: "author" });
  check(page1.page === 1 && page1.perPage === 2 && page1.totalItems === 4 && page1.totalPages === 2, "paging: " + JSON.stringify(page1));
  check(page1.items.map((x) => x.title).join(",") === "post 5,post 4", "order: " + page1.items.map((x) => x.title));
  check(page1.items[0].expand && page1.items[0].expand.author && page1.items[0].expand.author.id === alice.id, "expand: " + JSON.stringify(page1.items[0]));
  const page2 = await user.collection("posts").getList(2, 2, { filter: "views >= 20", sort: "-views" });
  check(page2.items.map((x) => x.title).join(",") === "post 3,post 2", "page 2: " + page2.items.map((x) => x.title));
  const all = await user.collection("posts").getFullList({ sort: "created" });
  check(all.length === 5, "full list " + all.length);
  const first = await user.collection("posts").getFirstListItem('title = "post 3"');
  check(first.id === created[2].id, "first item");
});

await step("view, update and delete", async () => {
  const one = await user.collection("posts").getOne(created[0].id, { expand: "author" });
  check(one.title === "post 1" && one.expand.author.email === "alice@example.com", "view: " + JSON.stringify(one));
  const up = await user.collection("posts").update(created[0].id, { title: "post 1 edited", "views+": 5 });
  check(up.title === "post 1 edited" && up.views === 15, "update: " + JSON.stringify(up));
  check(await user.collection("posts").delete(created[4].id) === true, "delete");
  try {
    await user.collection("posts").getOne(created[4].id);
    throw new Error("a deleted record was found");
  } catch (e) {
    check(e.status === 404, "after delete: " + e.status);
  }
});

await step("anonymous create is refused by the rule", async () => {
  const anon = new PocketBase(url3);
  try {
    await anon.collection("posts").create({ title: "anonymous" });
    throw new Error("an anonymous create succeeded");
  } catch (e) {
    check(e.status === 400 || e.status === 403, "status " + e.status + " " + JSON.stringify(e.response));
  }
});

await step("file upload and its URL", async () => {
  const bytes = new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10, 1, 2, 3, 4]);
  const form = new FormData();
  form.append("title", "with a file");
  form.append("author", alice.id);
  form.append("cover", new Blob([bytes], { type: "application/octet-stream" }), "cover.bin");
  const rec = await user.collection("posts").create(form);
  check(typeof rec.cover === "string" && rec.cover.length > 0, "cover: " + JSON.stringify(rec));
  const url = user.files.getURL(rec, rec.cover);
  const res = await fetch(url);
  check(res.status === 200, "GET " + url + ": " + res.status);
  const got = new Uint8Array(await res.arrayBuffer());
  check(got.length === bytes.length && got.every((b, i) => b === bytes[i]), "the bytes differ");
  const other = await fetch(url.replace(url2, url3)); // any node serves it
  check(other.status === 200, "node 3: " + other.status);
});

await step("batch", async () => {
  const batch = su.createBatch();
  batch.collection("posts").create({ title: "batch 1", author: alice.id });
  batch.collection("posts").update(created[1].id, { title: "post 2 by batch" });
  batch.collection("posts").delete(created[3].id);
  const out = await batch.send();
  check(Array.isArray(out) && out.length === 3, "answer: " + JSON.stringify(out));
  check(out[0].status === 200 && out[0].body.title === "batch 1", "create: " + JSON.stringify(out[0]));
  check(out[1].status === 200 && out[1].body.title === "post 2 by batch", "update: " + JSON.stringify(out[1]));
  check(out[2].status === 204, "delete: " + JSON.stringify(out[2]));
});

await step("realtime: a change written through another node", async () => {
  const watcher = new PocketBase(url1);
  watcher.authStore.save(user.authStore.token, user.authStore.record);
  const seen = [];
  const unsubscribe = await watcher.collection("posts").subscribe("*", (e) => seen.push(e));
  const writer = new PocketBase(url3);
  writer.authStore.save(user.authStore.token, user.authStore.record);
  const rec = await writer.collection("posts").create({ title: "live", author: alice.id });
  for (let i = 0; i < 100 && !seen.some((e) => e.record && e.record.id === rec.id); i++) await sleep(50);
  const e = seen.find((e) => e.record && e.record.id === rec.id);
  check(e && e.action === "create" && e.record.title === "live" && e.record.collectionName === "posts", "events: " + JSON.stringify(seen));
  await unsubscribe();
});

await step("realtime: the subscription sent to another node than the stream", async () => {
  // A load balancer may send the subscription POST elsewhere than the
  // open stream: here the SDK's own requests are routed so.
  const watcher = new PocketBase(url1);
  watcher.authStore.save(user.authStore.token, user.authStore.record);
  watcher.beforeSend = (url, options) =>
    url.startsWith(url1 + "/api/realtime") && options.method === "POST" ? { url: url.replace(url1, url2), options } : { url, options };
  const seen = [];
  const unsubscribe = await watcher.collection("posts").subscribe(created[0].id, (e) => seen.push(e));
  await user.collection("posts").update(created[0].id, { title: "seen through node 2's subscription" });
  for (let i = 0; i < 100 && seen.length === 0; i++) await sleep(50);
  check(seen.length > 0 && seen[0].action === "update" && seen[0].record.title === "seen through node 2's subscription", "events: " + JSON.stringify(seen));
  await unsubscribe();
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
