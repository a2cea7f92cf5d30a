#!/usr/bin/env python3
"""What each pool of a console paid for and used, read from its console.db.

    tests/bench/demo-leases.py DATA_DIR/demo/console.db   # the demo's (cargo xtask demo)

Per pool: its leases and the GPU-hours they started (each lease pays its started hours),
the GPU-hours used, the grants and releases its activity entries carry (every lease should
trace to a grant there), and every lease released inside its first paid hour while the
same pool rented another later in that hour (the money promise says none; a spot GPU its
owner took back is listed too, marked spot: check it against the pool's reclaim entries).
"""
import json
import math
import sqlite3
import sys
import time

HOUR_MS = 3_600_000


def main(path: str) -> None:
    db = sqlite3.connect(path)
    now = int(time.time() * 1000)
    for pool_id, name in db.execute("SELECT id, name FROM pools ORDER BY name"):
        leases = db.execute(
            "SELECT host, lease_id, gpu_uuids, granted_at_ms, ended_at_ms, spot FROM pool_leases "
            "WHERE pool_id = ? ORDER BY granted_at_ms",
            (pool_id,),
        ).fetchall()
        started = used = 0.0
        early = []
        for host, lease_id, uuids, granted, ended, spot in leases:
            gpus = len(json.loads(uuids))
            held = max(1, (ended if ended is not None else now) - granted)
            started += gpus * math.ceil(held / HOUR_MS)
            used += gpus * held / HOUR_MS
            if ended is not None and ended - granted < HOUR_MS:
                later = [l for l in leases if ended < l[3] < granted + HOUR_MS]
                if later:
                    early.append((host, lease_id, bool(spot), (ended - granted) // 1000))
        results = [
            result
            for (text,) in db.execute("SELECT results FROM activity WHERE pool_id = ?", (pool_id,))
            for result in json.loads(text)
        ]
        granted = sum(r.get("granted", 0) for r in results)
        released = sum(r.get("released", 0) for r in results)
        print(
            f"{name}: {len(leases)} leases, {started:.0f} GPU-hours started, {used:.2f} used; "
            f"activity: {granted} granted, {released} released; "
            f"released early while the pool rented again: {len(early)}"
        )
        for host, lease_id, spot, held_s in early:
            print(f"    {host} {lease_id}{' (spot)' if spot else ''}: released after {held_s} s")


if __name__ == "__main__":
    main(sys.argv[1])
