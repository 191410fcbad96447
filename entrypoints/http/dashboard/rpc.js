// The dashboard's only way to the data: JSON-RPC 2.0 over POST /rpc, like any client.
// The token (when the server has one) lives in this tab's sessionStorage only.

const TOKEN_KEY = "mcp-memory.token";
let nextId = 0;

export class AuthRequired extends Error {
  constructor(reason) {
    super(reason === "token_invalid" ? "The server refused this token." : "This server needs its token.");
    this.reason = reason;
  }
}

export class RpcError extends Error {
  constructor(error) {
    super(error.message);
    this.code = error.code;
    this.data = error.data ?? null;
  }
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  sessionStorage.setItem(TOKEN_KEY, value);
}

export function forgetToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

async function post(body) {
  const headers = { "content-type": "application/json" };
  const saved = token();
  if (saved) headers.authorization = `Bearer ${saved}`;
  const response = await fetch("/rpc", {
    method: "POST",
    headers,
    body: JSON.stringify(body),
    credentials: "omit",
    cache: "no-store",
    referrerPolicy: "no-referrer",
  });
  const reply = await response.json().catch(() => null);
  if (response.status === 401) throw new AuthRequired(reply?.error?.data?.reason ?? "token_missing");
  if (reply === null) throw new Error(`The server answered ${response.status} without JSON.`);
  if (!response.ok && !Array.isArray(reply) && reply.error) throw new RpcError(reply.error);
  return reply;
}

function unwrap(reply) {
  if (reply.error) throw new RpcError(reply.error);
  return reply.result;
}

export async function call(method, params = {}) {
  nextId += 1;
  return unwrap(await post({ jsonrpc: "2.0", id: nextId, method, params }));
}

// Several calls in one JSON-RPC batch; results in the order of `calls`, each a value or an RpcError.
export async function batch(calls) {
  const first = nextId + 1;
  const messages = calls.map(([method, params], index) => ({ jsonrpc: "2.0", id: first + index, method, params }));
  nextId += calls.length;
  const replies = await post(messages);
  const byId = new Map((Array.isArray(replies) ? replies : [replies]).map((reply) => [reply.id, reply]));
  return messages.map((message) => {
    const reply = byId.get(message.id);
    if (!reply) return new RpcError({ code: -32603, message: "no answer in the batch" });
    return reply.error ? new RpcError(reply.error) : reply.result;
  });
}
