"""Whatever params a client sends to the resource and prompt methods, the answer is a result
or an error naming what was wrong (-32600, -32602, -32002), never an internal error."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.strategies import any_json_values
from tests.unit.entrypoints.mcp.dispatch_client import Client


MCP_FEATURE_METHODS = ["resources/list", "resources/templates/list", "resources/read", "prompts/list", "prompts/get"]
URIS = st.one_of(st.text(max_size=40), st.text(max_size=30).map(lambda s: "memory://notes/" + s), st.text(max_size=30).map(lambda s: "memory://context/" + s))
PARAMS = st.one_of(
    st.none(),
    any_json_values,
    st.fixed_dictionaries({"uri": st.one_of(URIS, any_json_values)}),
    st.fixed_dictionaries({"cursor": st.one_of(st.text(max_size=30), any_json_values)}),
    st.fixed_dictionaries({"name": st.sampled_from(["recall", "x"]), "arguments": st.one_of(any_json_values, st.dictionaries(st.sampled_from(["project", "query", "other"]), st.one_of(st.text(max_size=30), any_json_values)))}),
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(method=st.sampled_from(MCP_FEATURE_METHODS), params=PARAMS)
def test_any_params_get_a_result_or_a_named_error_never_an_internal_one(client: Client, method: str, params: Any) -> None:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        message["params"] = params
    reply = client.send(message)
    if "error" in reply:
        assert reply["error"]["code"] in (-32600, -32602, -32002), reply
    else:
        assert isinstance(reply["result"], dict)
