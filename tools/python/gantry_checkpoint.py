"""Report a committed checkpoint to Gantry from inside a running task.

Standard library only. Gantry's backend gives every task of a run:

    GANTRY_API_URL         where to report (e.g. http://127.0.0.1:8080)
    GANTRY_JOB_ID          the job
    GANTRY_RUN_TOKEN       this run's own token (proves the report comes from this run)
    GANTRY_CHECKPOINT_DIR  the job's checkpoint directory, when its spec declares one

Call report() right after a checkpoint is completely written (after the file is closed and renamed into place):

    import gantry_checkpoint
    torch.save(state, tmp); os.replace(tmp, path)
    gantry_checkpoint.report(step=step, path=path, size_bytes=os.path.getsize(path), save_seconds=elapsed)

Or from a shell:  python3 gantry_checkpoint.py --step 1200 --path /ckpt/run/step-1200.pt

Without network calls from the task: write_marker() (or --marker) writes the same facts to
GANTRY_CHECKPOINT_DIR/gantry-checkpoint.json (atomically: a temporary file renamed into place), and the local
backend reports it for the task within a poll.

Preemption notice: when Gantry stops a run (a preemption, or a drain for a starving gang) its tasks get SIGTERM and
a grace period; a checkpoint committed before the deadline is the one the job resumes from. preemption_notice()
says whether this run is being stopped, why and by when (the file GANTRY_PREEMPTION_NOTICE first, the API
otherwise), for training loops that poll instead of handling SIGTERM:

    if step % 50 == 0 and gantry_checkpoint.preemption_notice():
        save_checkpoint(); sys.exit(0)

From a shell:  python3 gantry_checkpoint.py --preemption   (exit 0 and the notice when stopping, 3 when not)
"""

import json
import os
import sys
import urllib.error
import time
import urllib.request

__all__ = ["report", "write_marker", "preemption_notice", "ReportError", "checkpoint_dir", "MARKER"]

MARKER = "gantry-checkpoint.json"


class ReportError(Exception):
    """Gantry refused the report (the message is Gantry's own sentence) or could not be reached."""


def checkpoint_dir():
    """The job's declared checkpoint directory, or None."""
    return os.environ.get("GANTRY_CHECKPOINT_DIR")


def _body(step, path, size_bytes, save_seconds):
    body = {"step": int(step), "path": os.path.abspath(str(path))}
    if size_bytes is not None:
        body["sizeBytes"] = int(size_bytes)
    if save_seconds is not None:
        body["saveSeconds"] = round(float(save_seconds), 3)
    return body


def write_marker(step, path, size_bytes=None, save_seconds=None, env=None):
    """Records a committed checkpoint as a marker file in the job's checkpoint directory; returns the marker's path.

    The backend watching the directory reports it (the local backend does); a newer marker replaces the older one.
    Raises ReportError when the job declared no checkpoint directory.
    """
    env = os.environ if env is None else env
    directory = env.get("GANTRY_CHECKPOINT_DIR")
    if not directory:
        raise ReportError("the job declares no checkpoint directory (GANTRY_CHECKPOINT_DIR is not set)")
    marker = os.path.join(directory, MARKER)
    tmp = marker + ".%d.tmp" % os.getpid()
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(_body(step, path, size_bytes, save_seconds), f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, marker)
    return marker


def report(step, path, size_bytes=None, save_seconds=None, timeout=10.0, retries=8, env=None):
    """Tells Gantry that a checkpoint at `path` for `step` is committed. Returns Gantry's answer (a dict).

    Retries on connection errors and 503 (waiting as Retry-After says, at most 5 s; a run that reports right after
    it started may be early for the API); a repeated report of the same step and path is the same fact, so a retry
    is harmless. Raises ReportError when Gantry refuses (4xx) or stays unreachable.
    """
    env = os.environ if env is None else env
    missing = [k for k in ("GANTRY_API_URL", "GANTRY_JOB_ID", "GANTRY_RUN_TOKEN") if not env.get(k)]
    if missing:
        raise ReportError("not running under Gantry (missing " + ", ".join(missing) + ")")
    body = _body(step, path, size_bytes, save_seconds)
    base = env["GANTRY_API_URL"].rstrip("/")
    if not (base.startswith("http://") or base.startswith("https://")):
        raise ReportError("GANTRY_API_URL is not an http(s) URL: %r" % base)
    url = base + "/v1/jobs/" + env["GANTRY_JOB_ID"] + "/checkpoints"
    data = json.dumps(body).encode("utf-8")
    last = None
    for _ in range(max(1, retries)):
        request = urllib.request.Request(url, data=data, method="POST", headers={
            "Content-Type": "application/json",
            "Authorization": "Bearer " + env["GANTRY_RUN_TOKEN"],
        })
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return json.loads(answer.read().decode("utf-8") or "{}")
        except urllib.error.HTTPError as e:
            detail = _problem(e)
            if e.code == 503:
                last = ReportError("Gantry is busy: " + detail)
                time.sleep(_retry_after(e))
                continue
            raise ReportError("checkpoint refused (%d): %s" % (e.code, detail)) from None
        except (urllib.error.URLError, OSError) as e:
            last = ReportError("cannot reach Gantry at %s: %s" % (url, e))
            time.sleep(1.0)
    raise last


def preemption_notice(timeout=5.0, env=None):
    """This run's preemption notice, or None while it is not being stopped.

    The notice is a dict: reason (PREEMPTED), message (why), noticeAt, deadline (ISO-8601 UTC: when what still runs
    is killed) and, from the API, secondsLeft. Read from the file GANTRY_PREEMPTION_NOTICE when the backend provides
    one (no network: the local backend writes it before SIGTERM; on Kubernetes it is a file the kubelet refreshes,
    empty until set), else asked of the API with the run's token. Raises ReportError when neither can answer.
    """
    env = os.environ if env is None else env
    path = env.get("GANTRY_PREEMPTION_NOTICE")
    if path:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read().strip()
            if text:
                return json.loads(text)
        except FileNotFoundError:
            pass
        except (OSError, ValueError):
            pass  # being replaced, or unreadable: the API answers
    missing = [k for k in ("GANTRY_API_URL", "GANTRY_JOB_ID", "GANTRY_RUN_TOKEN") if not env.get(k)]
    if missing:
        if path:
            return None  # the backend's file is the whole answer here
        raise ReportError("not running under Gantry (missing " + ", ".join(missing) + ")")
    base = env["GANTRY_API_URL"].rstrip("/")
    if not (base.startswith("http://") or base.startswith("https://")):
        raise ReportError("GANTRY_API_URL is not an http(s) URL: %r" % base)
    request = urllib.request.Request(base + "/v1/jobs/" + env["GANTRY_JOB_ID"] + "/preemption", method="GET",
                                     headers={"Authorization": "Bearer " + env["GANTRY_RUN_TOKEN"]})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            notice = json.loads(answer.read().decode("utf-8") or "{}")
    except urllib.error.HTTPError as e:
        if e.code == 503:
            return None  # this run's start has not reached the API yet: nothing to tell
        raise ReportError("preemption notice refused (%d): %s" % (e.code, _problem(e))) from None
    except (urllib.error.URLError, OSError) as e:
        raise ReportError("cannot reach Gantry at %s: %s" % (base, e)) from None
    return notice if notice.get("preempting") else None


def _retry_after(error):
    try:
        return min(5.0, max(0.1, float(error.headers.get("Retry-After", "1"))))
    except (TypeError, ValueError):
        return 1.0


def _problem(error):
    try:
        problem = json.loads(error.read().decode("utf-8"))
        fields = "; ".join("%s: %s" % (f.get("field"), f.get("message")) for f in problem.get("errors", []))
        return problem.get("detail") or fields or problem.get("title") or str(error)
    except (ValueError, AttributeError):
        return str(error)


def _main(argv):
    import argparse
    parser = argparse.ArgumentParser(description="Report a committed checkpoint to Gantry, or read this run's "
                                                 "preemption notice.")
    parser.add_argument("--step", type=int)
    parser.add_argument("--path")
    parser.add_argument("--size-bytes", type=int)
    parser.add_argument("--save-seconds", type=float)
    parser.add_argument("--marker", action="store_true",
                        help="write the marker file for the backend to report instead of calling the API")
    parser.add_argument("--preemption", action="store_true",
                        help="print this run's preemption notice; exit 0 when it is being stopped, 3 when not")
    args = parser.parse_args(argv)
    if not args.preemption and (args.step is None or args.path is None):
        parser.error("--step and --path are required (or --preemption)")
    try:
        if args.preemption:
            notice = preemption_notice()
            print(json.dumps(notice if notice else {"preempting": False}))
            return 0 if notice else 3
        if args.marker:
            print(write_marker(args.step, args.path, args.size_bytes, args.save_seconds))
        else:
            print(json.dumps(report(args.step, args.path, args.size_bytes, args.save_seconds)))
        return 0
    except ReportError as e:
        print("gantry_checkpoint: " + str(e), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
