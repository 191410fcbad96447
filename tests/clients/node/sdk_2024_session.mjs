// One session of the TypeScript SDK's client of MCP revision 2024-11-05 (pinned in
// package.json as mcp-sdk-2024-11-05) against `mcp-memory serve` over stdio. It refuses a
// server that answers initialize with a revision it does not know. Prints the transcript
// as JSON: what the client saw, for tests/integration/mcp/test_mcp_old_clients.py to judge.
// Usage: node sdk_2024_session.mjs '{"command": ..., "args": [...], "env": {...}}'
import { Client } from "mcp-sdk-2024-11-05/client/index.js";
import { StdioClientTransport } from "mcp-sdk-2024-11-05/client/stdio.js";

const target = JSON.parse(process.argv[2]);
const transport = new StdioClientTransport(target);
const client = new Client({ name: "sdk-2024-11-05", version: "1.0.4" }, { capabilities: {} });
const transcript = {};
try {
  await client.connect(transport);
  transcript.server = client.getServerVersion();
  transcript.tools = (await client.listTools()).tools.map((tool) => tool.name);
  const text = (result) => result.content.map((part) => part.text);
  const added = await client.callTool({
    name: "memory_add_note",
    arguments: { groupId: "g", text: "Releases are cut from the main branch every Tuesday." },
  });
  transcript.added = { isError: added.isError, text: text(added) };
  const found = await client.callTool({ name: "memory_search", arguments: { query: "when do we ship a release?" } });
  transcript.found = { isError: found.isError, text: text(found) };
  const bad = await client.callTool({ name: "memory_add_note", arguments: { groupId: "g", text: 5 } });
  transcript.bad = { isError: bad.isError, text: text(bad) };
  transcript.resources = (await client.listResources()).resources.map((resource) => resource.uri);
  transcript.prompts = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
} catch (error) {
  transcript.error = String(error);
} finally {
  await client.close();
}
console.log(JSON.stringify(transcript));
