// The official MCP TypeScript SDK client against a live svcd node, over
// Streamable HTTP or through the stdio bridge (`svcd mcp`). Driven by
// api/mcp_sdk_test.go; it prints one JSON object of what it saw, and the
// Go test checks it.
//
// node client.mjs <sdk-dir> http <base-url> <token>
// node client.mjs <sdk-dir> stdio <base-url> <token> <svcd-binary> [--read-only]
import path from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, mode, baseURL, token, svcd, ...rest] = process.argv.slice(2);
const sdk = (p) => import(pathToFileURL(path.join(sdkDir, "node_modules/@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");

let transport;
if (mode === "http") {
  const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
  transport = new StreamableHTTPClientTransport(new URL(baseURL + "/api/v1/mcp"), {
    requestInit: { headers: { Authorization: "Bearer " + token } },
  });
} else {
  const { StdioClientTransport } = await sdk("client/stdio.js");
  transport = new StdioClientTransport({
    command: svcd,
    args: ["mcp", ...rest],
    env: { ...process.env, SVC_URL: baseURL, SVC_MCP_TOKEN: token },
    stderr: "inherit",
  });
}

const client = new Client({ name: "svcd-test", version: "1.0.0" });
await client.connect(transport);
const out = { server: client.getServerVersion(), protocol: transport.protocolVersion ?? null };

const tools = await client.listTools();
out.tools = tools.tools.map((t) => t.name).sort();
out.createSchema = tools.tools.find((t) => t.name === "svc.create_notes")?.inputSchema ?? null;

const call = async (name, args) => {
  try {
    const r = await client.callTool({ name, arguments: args });
    return { isError: r.isError ?? false, structured: r.structuredContent ?? null, text: r.content?.[0]?.text ?? "" };
  } catch (e) {
    return { code: e.code, message: e.message };
  }
};
out.created = await call("svc.create_notes", { title: "from the sdk", body: "hello" });
out.list = await call("svc.list_notes", { filter: 'title = "from the sdk"' });
out.secret = await call("svc.list_secrets", {});
out.admin = await call("svc.create_collection", { name: "nope" });
out.badArgs = await call("svc.list_notes", { perPage: "many" });

const resources = await client.listResources();
out.resources = resources.resources.map((r) => r.uri).sort();
const templates = await client.listResourceTemplates();
out.templates = templates.resourceTemplates.map((r) => r.uriTemplate).sort();
const info = await client.readResource({ uri: "svc://server/info" });
out.info = JSON.parse(info.contents[0].text);
if (out.created.structured?.id) {
  const rec = await client.readResource({ uri: `svc://record/notes/${out.created.structured.id}` });
  out.record = JSON.parse(rec.contents[0].text);
}

const prompts = await client.listPrompts();
out.prompts = prompts.prompts.map((p) => p.name).sort();
const pb = await client.getPrompt({ name: "import-from-pocketbase", arguments: { schema: '[{"name":"posts","type":"base","fields":[]}]' } });
out.pbPrompt = pb.messages[0].content.text;

await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
