package io.gantry.admission.db;

import io.gantry.admission.core.JobState;
import io.gantry.admission.core.JobStatus;
import io.gantry.admission.core.JobStatus.Mark;
import io.gantry.admission.core.JobStatus.Progress;
import io.gantry.admission.core.JobStatus.Terminal;
import io.gantry.admission.core.Placement;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The core's {@link JobStatus} as a JSON tree for the {@code jobs.status_json} column, and back. */
final class StatusJson {
    private StatusJson() {
    }

    static Map<String, Object> toTree(JobStatus s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("progress", Map.of("attempt", s.progress().attempt(), "state", s.progress().state().name()));
        if (s.terminal() != null) {
            m.put("terminal", Map.of("attempt", s.terminal().attempt(), "state", s.terminal().state().name()));
        }
        if (s.waiting() != null) {
            m.put("waiting", mark(s.waiting()));
        }
        if (s.grant() != null) {
            m.put("grant", mark(s.grant()));
        }
        if (s.idle() != null) {
            m.put("idle", mark(s.idle()));
        }
        if (s.updatedAt() != null) {
            m.put("updatedAt", s.updatedAt().toEpochMilli());
        }
        if (s.notice() != null) {
            JobStatus.Notice n = s.notice();
            Map<String, Object> nm = new LinkedHashMap<>();
            nm.put("attempt", n.attempt());
            nm.put("at", n.at().toEpochMilli());
            nm.put("eventId", n.eventId());
            nm.put("reason", n.reason());
            nm.put("message", n.message());
            nm.put("deadline", n.deadline().toEpochMilli());
            m.put("notice", nm);
        }
        return m;
    }

    static JobStatus fromTree(Map<?, ?> m) {
        Map<?, ?> p = (Map<?, ?>) m.get("progress");
        Map<?, ?> t = (Map<?, ?>) m.get("terminal");
        return new JobStatus(
                new Progress(num(p.get("attempt")).intValue(), JobState.valueOf((String) p.get("state"))),
                t == null ? null : new Terminal(num(t.get("attempt")).intValue(), JobState.valueOf((String) t.get("state"))),
                mark((Map<?, ?>) m.get("waiting")),
                mark((Map<?, ?>) m.get("grant")),
                m.get("updatedAt") == null ? null : Instant.ofEpochMilli(num(m.get("updatedAt")).longValue()),
                notice((Map<?, ?>) m.get("notice")),
                mark((Map<?, ?>) m.get("idle"))); // rows written before idle warnings have none
    }

    /** Rows written before preemption notices have none. */
    private static JobStatus.Notice notice(Map<?, ?> n) {
        return n == null ? null : new JobStatus.Notice(num(n.get("attempt")).intValue(),
                Instant.ofEpochMilli(num(n.get("at")).longValue()), (String) n.get("eventId"), (String) n.get("reason"),
                (String) n.get("message"), Instant.ofEpochMilli(num(n.get("deadline")).longValue()));
    }

    static List<Map<String, Object>> placements(List<Placement> placements) {
        return placements.stream().map(p -> {
            Map<String, Object> pm = new LinkedHashMap<>();
            pm.put("task", p.task());
            pm.put("replica", p.replica());
            pm.put("nodeId", p.nodeId());
            pm.put("gpuModel", p.gpuModel());
            pm.put("gpuIndices", p.gpuIndices());
            return pm;
        }).toList();
    }

    private static Map<String, Object> mark(Mark k) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("attempt", k.attempt());
        m.put("at", k.at().toEpochMilli());
        m.put("order", k.order());
        m.put("eventId", k.eventId());
        m.put("set", k.set());
        m.put("reason", k.reason());
        m.put("message", k.message());
        m.put("placements", placements(k.placements()));
        m.put("cause", k.cause());
        return m;
    }

    private static Mark mark(Map<?, ?> m) {
        if (m == null) {
            return null;
        }
        List<Placement> placements = ((List<?>) m.get("placements")).stream().map(o -> {
            Map<?, ?> pm = (Map<?, ?>) o;
            return new Placement((String) pm.get("task"), num(pm.get("replica")).intValue(), (String) pm.get("nodeId"),
                    (String) pm.get("gpuModel"),
                    ((List<?>) pm.get("gpuIndices")).stream().map(i -> num(i).intValue()).toList());
        }).toList();
        return new Mark(num(m.get("attempt")).intValue(), Instant.ofEpochMilli(num(m.get("at")).longValue()),
                num(m.get("order")).intValue(), (String) m.get("eventId"), Boolean.TRUE.equals(m.get("set")),
                (String) m.get("reason"), (String) m.get("message"), placements, (String) m.get("cause"));
    }

    private static Number num(Object o) {
        return (Number) o;
    }
}
