"""The model client beside a plain openai-SDK thread pool: the same calls to an instant local server.

An asyncio server in a process of its own answers every chat completion at once (HTTP/1.1, kept alive,
one fixed answer), so that what is timed is the client: the SDK loop (``client.chat.completions.create``
in a ``ThreadPoolExecutor`` of ``concurrency`` threads, no cache) and castregin's :class:`castregin.llm.Client`
(``Client.run`` of the same calls: keys, the cache looked up, each answer stored in SQLite before it counts,
the deadline and size bounds, the strict reading of the answer). Each runs in a new process; the calls
alone are timed (wall and the process's CPU seconds), not the interpreter's start nor the imports; the two
alternate, medians of ``repeat`` rounds. Used by ``benchmarks/run.py`` (``--only llm``); runnable alone::

    python benchmarks/bench_llm.py --calls 2000 --repeat 5

The target (part 25): castregin's wall time at most 1.3 times the SDK loop's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PYTHON = REPO / ".venv" / "bin" / "python"
TARGET = 1.3
#: Calls each client makes before the timed ones: the SDK imports its request and answer types at its first
#: call; that is a start-up, not a call's cost.
WARM_UP = 20

ANSWER = json.dumps({
    "id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "m",
    "choices": [{"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "The item is on topic.\nLabel: 2", "refusal": None}}],
    "usage": {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129},
}).encode()
RESPONSE = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(ANSWER)) + ANSWER


# --- the instant server ---------------------------------------------------------------------------------------------

async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            await reader.readexactly(length)
            writer.write(RESPONSE)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def _serve(port_file: str) -> None:
    server = await asyncio.start_server(_answer, "127.0.0.1", 0, backlog=1024)
    Path(port_file).write_text(str(server.sockets[0].getsockname()[1]))
    async with server:
        await server.serve_forever()


# --- the two clients, each timed in its own process ---------------------------------------------------------------

def _messages(calls: int) -> list[list[dict]]:
    """Distinct prompts of a judging call's size (a system message and a rubric with a conversation)."""
    system = "You judge one candidate system turn of a conversation on one criterion, on a scale of 0-3. " * 4
    return [[{"role": "system", "content": system},
             {"role": "user", "content": f"Criterion: Relevance.\nBEGIN CONVERSATION\nuser: question {n} about "
                                         f"sourdough bread and mountains\nEND CONVERSATION\nBEGIN ITEM {n:012x}\n"
                                         f"Would you like to know more about aspect {n}?\nEND ITEM {n:012x}\n"
                                         "How would you rate the item's relevance? End with the line \"Label: N\"."}]
            for n in range(calls)]


def _peak_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux


def _time_sdk(url: str, calls: int, concurrency: int) -> dict:
    from concurrent.futures import ThreadPoolExecutor

    import openai

    client = openai.OpenAI(api_key="no-key", base_url=url, max_retries=0)
    prompts = _messages(calls + WARM_UP)

    def one(messages):
        return client.chat.completions.create(model="m", messages=messages, temperature=0.0).choices[0].message.content

    for messages in prompts[:WARM_UP]:
        one(messages)
    prompts = prompts[WARM_UP:]
    started, cpu = time.perf_counter(), time.process_time()
    with ThreadPoolExecutor(concurrency) as pool:
        answers = list(pool.map(one, prompts))
    result = {"seconds": time.perf_counter() - started, "cpu": time.process_time() - cpu, "peak_mb": _peak_mb()}
    if len(answers) != calls or not all(a.endswith("Label: 2") for a in answers):
        raise RuntimeError("the SDK loop did not get every answer")
    return result


def _time_castregin(url: str, calls: int, concurrency: int) -> dict:
    # openai imported before the timed part, as the SDK loop imports it (the client would at its first request).
    import openai  # noqa: F401

    from castregin.llm import Client, EndpointSettings

    prompts = _messages(calls + WARM_UP)
    with tempfile.TemporaryDirectory() as directory:
        settings = EndpointSettings(model="m", base_url=url, concurrency=concurrency, api_key_env="BENCH_NO_KEY")
        # The client made and its cache opened outside the timed part, as the SDK's client is above.
        with Client(settings, os.path.join(directory, "cache.sqlite")) as client:
            client.run([client.call(messages) for messages in prompts[:WARM_UP]])
            prompts = prompts[WARM_UP:]
            started, cpu = time.perf_counter(), time.process_time()
            answers = client.run([client.call(messages) for messages in prompts])
            result = {"seconds": time.perf_counter() - started, "cpu": time.process_time() - cpu,
                      "peak_mb": _peak_mb()}
    if len(answers) != calls or not all(a.content.endswith("Label: 2") for a in answers.values()):
        raise RuntimeError("castregin's client did not get every answer")
    return result


CLIENTS = {"openai SDK, thread pool": "sdk", "castregin.llm.Client (cache, bounds)": "castregin"}


def bench_llm(repeat: int = 3, calls: int = 2000, concurrency: int = 4) -> tuple[list, list[str]]:
    """The rows (:class:`bench_evaluate.Timing`) of both clients and a note with the ratio and the target."""
    sys.path.insert(0, str(HERE))
    from bench_evaluate import Timing

    # Bytecode written and read as an installed package has it (PYTHONDONTWRITEBYTECODE would compile the SDK's
    # modules again in every process).
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as directory:
        port_file = os.path.join(directory, "port")
        server = subprocess.Popen([str(PYTHON), __file__, "--serve", port_file])
        try:
            deadline = time.monotonic() + 30
            while not (os.path.exists(port_file) and Path(port_file).read_text()) and time.monotonic() < deadline:
                time.sleep(0.05)
            url = f"http://127.0.0.1:{Path(port_file).read_text()}/v1"
            runs: dict[str, list[dict]] = {name: [] for name in CLIENTS}
            for _ in range(repeat):  # alternately: a change in the machine's load touches both alike
                for name, which in CLIENTS.items():
                    command = [str(PYTHON), __file__, "--client", which, "--url", url, "--calls", str(calls),
                               "--concurrency", str(concurrency)]
                    done = subprocess.run(command, capture_output=True, text=True, check=True, env=environment)
                    runs[name].append(json.loads(done.stdout.splitlines()[-1]))
        finally:
            server.terminate()
            server.wait()
    workload = f"{calls:,} chat completions, {concurrency} in flight, an instant local server"
    rows, medians = [], {}
    for name, measured in runs.items():
        seconds = statistics.median(m["seconds"] for m in measured)
        cpu = statistics.median(m["cpu"] for m in measured)
        medians[name] = (seconds, cpu)
        peak = statistics.median(m["peak_mb"] for m in measured)
        rows.append(Timing(workload, name, seconds, peak, repeat, note=f"{cpu:.2f} s CPU"))
    sdk_name, our_name = CLIENTS
    (ours, our_cpu), (sdk, sdk_cpu) = medians[our_name], medians[sdk_name]
    ratio = ours / sdk
    verdict = "met" if ratio <= TARGET else "NOT met"
    notes = [(f"- the model client: castregin takes {ratio:.2f}x the SDK loop's wall time ({ours:.2f} s vs "
              f"{sdk:.2f} s) and {our_cpu / sdk_cpu:.2f}x its CPU time, for {calls:,} calls "
              f"(target: {TARGET}x or less, {verdict})")]
    return rows, notes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--serve", metavar="PORT_FILE", help="Run the instant server; its port goes to PORT_FILE.")
    parser.add_argument("--client", choices=sorted(set(CLIENTS.values())), help="Time one client (one process).")
    parser.add_argument("--url")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(_serve(args.serve))
    elif args.client:
        timer = _time_sdk if args.client == "sdk" else _time_castregin
        print(json.dumps(timer(args.url, args.calls, args.concurrency)))
    else:
        sys.path.insert(0, str(HERE))
        from bench_evaluate import markdown

        rows, notes = bench_llm(args.repeat, args.calls, args.concurrency)
        print(markdown(rows))
        print("\n".join(notes))


if __name__ == "__main__":
    main()
