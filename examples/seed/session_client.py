"""The seed's Session Management example, ``client.py`` half: run this file.

From ``##### client.py #####`` to the ``MESSAGE`` print this is the seed's code verbatim; the seed's two
halves share one module, so the imports below bring what ``client.py`` uses from ``session_server.py``. An
answer of ``t`` (trust) is stored in ``agent.state`` in the session, so the second deletion the model
asks for is not interrupted again; ``y`` approves one deletion only, so it asks twice.

    printf 't\\n' | python examples/seed/session_client.py      # one question, both files deleted
    printf 'y\\ny\\n' | python examples/seed/session_client.py   # asked once per deletion
"""

import json

from session_server import MODEL, STORAGE_DIR, AgentResult, server

# --- the seed -----------------------------------------------------------------------------------------
##### client.py #####

def client(paths: list[str]) -> AgentResult:
    result = server(f"paths=<{paths}>")

    while True:
        if result.stop_reason != "interrupt":
            break

        responses = []
        for interrupt in result.interrupts:
            if interrupt.name == "myapp-approval":
                user_input = input(f"Do you want to delete {interrupt.reason['paths']} (t/y/N): ")
                responses.append({
                    "interruptResponse": {
                        "interruptId": interrupt.id,
                        "response": user_input
                    }
                })

        result = server(responses)

    return result


paths = ["a/b/c.txt", "d/e/f.txt"]
result = client(paths)
print(f"MESSAGE: {json.dumps(result.message)}")

# --- not in the seed: what the model was told, so a run can be checked -------------------------------
print()
for message in MODEL.requests[-1]["messages"]:
    for block in message["content"]:
        if "toolResult" in block:
            print(f"TOOL RESULT: {json.dumps(block['toolResult'])}")
print(f"MODEL CALLS: {MODEL.calls}")
print(f"SESSION STORED IN: {STORAGE_DIR}")
