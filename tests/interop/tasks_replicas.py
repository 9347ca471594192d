"""MCP tasks (SEP-2663) across three Warden replicas sharing a Redis task store.

Raw 2026-07-28 requests, as a client sends them, to each replica directly and through nginx.
Usage: tasks_replicas.py STEP LB_URL REPLICAS_JSON, where STEP is `shared` (a task created on
one replica is polled, answered and cancelled through the others and through nginx) or
`killed NAME` (the task of a replica SIGKILLed by the caller turns `failed` within the lease)
or `start NAME TOOL ARGS_JSON` (prints a task id) or `wait NAME ID STATUS` (polls to a status).
"""

import json
import sys
import time
import urllib.request

EXT = "io.modelcontextprotocol/tasks"
failures = 0


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures += 1


def post(url, method, params):
    params = dict(params)
    params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "tasks-replicas", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {EXT: {}}},
    }
    name = params.get("name") or params.get("taskId")
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }
    if name:
        headers["Mcp-Name"] = name
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    request = urllib.request.Request(url, body, headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
    if text.lstrip().startswith("{"):
        return json.loads(text)
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            message = json.loads(line[5:])
            if message.get("id") == 1:
                return message
    raise RuntimeError(f"no answer in {text!r}")


def create(url, tool, arguments):
    answer = post(url, "tools/call", {"name": tool, "arguments": arguments})
    task_id = answer.get("result", {}).get("taskId")
    if not task_id:
        raise RuntimeError(f"{tool} did not become a task: {answer}")
    return task_id


def get(url, task_id):
    return post(url, "tasks/get", {"taskId": task_id})["result"]


def until(url, task_id, want, limit=30.0):
    started = time.monotonic()
    while True:
        task = get(url, task_id)
        if want(task):
            return task, time.monotonic() - started
        if time.monotonic() - started > limit:
            raise RuntimeError(f"task never got there: {task}")
        time.sleep(0.1)


def terminal(task):
    return task["status"] in ("completed", "failed", "cancelled")


def shared(lb, replicas):
    r1, r2, r3 = (f"http://{replicas[n]['addr']}/mcp" for n in ("r1", "r2", "r3"))
    # Created on r1, seen alike by r2, r3 and nginx while it runs.
    task_id = create(r1, "slow_compute", {"seconds": 30, "label": "shared"})
    seen = [get(url, task_id)["status"] for url in (r2, r3, lb)]
    check(seen == ["working"] * 3, f"a task created on r1 is `working` on r2, r3 and through nginx: {seen}")
    progress, _ = until(r2, task_id, lambda t: "statusMessage" in t)
    check(progress["statusMessage"].startswith("computing `shared`"),
          f"r2 shows r1's progress: {progress.get('statusMessage')!r}")
    # Cancelled through r3: r1 stops the guest, r2 sees `cancelled`.
    asked = time.monotonic()
    ack = post(r3, "tasks/cancel", {"taskId": task_id})["result"]
    check(ack == {"resultType": "complete"}, f"r3 acknowledges the cancel: {ack}")
    done, _ = until(r2, task_id, terminal)
    took = time.monotonic() - asked
    check(done["status"] == "cancelled", f"the cancel reached r1; r2 sees {done['status']} after {took:.2f} s")
    print(f"figure: cancel through r3 to `cancelled` seen on r2: {took:.2f} s")

    # A question asked on r1, answered through r2, the result read through nginx.
    task_id = create(r1, "confirm_delete", {"filename": "shared.txt"})
    asking, _ = until(r3, task_id, lambda t: t["status"] == "input_required")
    keys = list(asking.get("inputRequests", {}))
    check(len(keys) == 1 and asking["inputRequests"][keys[0]]["method"] == "elicitation/create",
          f"r3 shows r1's question: {keys}")
    answers = {keys[0]: {"action": "accept", "content": {"confirm": True}}}
    ack = post(r2, "tasks/update", {"taskId": task_id, "inputResponses": answers})["result"]
    check(ack == {"resultType": "complete"}, f"r2 acknowledges the answer: {ack}")
    done, took = until(lb, task_id, terminal)
    text = done.get("result", {}).get("content", [{}])[0].get("text")
    check(done["status"] == "completed" and text == "deleted shared.txt",
          f"the answer reached r1; nginx reads `{text}` after {took:.2f} s")
    print(f"figure: answer through r2 to the result through nginx: {took:.2f} s")

    # Unknown on every replica: a made-up id.
    for url in (r1, r2, r3):
        answer = post(url, "tasks/get", {"taskId": "made-up-" + task_id})
        check(answer.get("error", {}).get("code") == -32602, f"a made-up id is unknown at {url}")


def replay(replicas):
    """An interactive call's requestState is accepted once across every replica."""
    r1, r2, r3 = (f"http://{replicas[n]['addr']}/mcp" for n in ("r1", "r2", "r3"))
    tool = "test_input_required_result_elicitation"
    first = post(r1, "tools/call", {"name": tool, "arguments": {}})["result"]
    state = first.get("requestState")
    check(first.get("resultType") == "input_required" and bool(state), "r1 asks, with a sealed requestState")
    retry = {"name": tool, "arguments": {}, "requestState": state,
             "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}}}
    done = post(r2, "tools/call", retry)
    text = done.get("result", {}).get("content", [{}])[0].get("text")
    check(text == "Hello, Alice!", f"r2 continues the call r1 began: {text!r}")
    again = post(r3, "tools/call", retry)
    error = again.get("error", {})
    check(error.get("code") == -32602 and "another replica" in error.get("message", ""),
          f"r3 refuses the same requestState: {error.get('message')!r}")


def main():
    step, lb, replicas = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    url = lambda name: f"http://{replicas[name]['addr']}/mcp"
    if step == "shared":
        shared(lb, replicas)
    elif step == "replay":
        replay(replicas)
    elif step == "start":
        print(create(url(sys.argv[4]), sys.argv[5], json.loads(sys.argv[6])))
        return
    elif step == "wait":
        task, took = until(url(sys.argv[4]), sys.argv[5], terminal, limit=float(sys.argv[7]) if len(sys.argv) > 7 else 30)
        error = task.get("error", {}).get("message", "")
        text = (task.get("result", {}).get("content") or [{}])[0].get("text", "")
        check(task["status"] == sys.argv[6], f"the task is {task['status']} after {took:.2f} s: {error or text}")
        print(f"figure: {took:.2f} s to {task['status']}")
        if sys.argv[6] == "failed":
            check(sys.argv[8] in error if len(sys.argv) > 8 else True, f"its error names why: {error!r}")
    if failures:
        sys.exit(f"{failures} check(s) failed")


if __name__ == "__main__":
    main()
