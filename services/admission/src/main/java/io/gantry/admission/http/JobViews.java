package io.gantry.admission.http;

import io.gantry.admission.core.AdmissionFact;
import io.gantry.admission.core.JobStatus;
import io.gantry.admission.core.Placement;
import io.gantry.admission.db.HistoryEntry;
import io.gantry.admission.db.JobRecord;
import io.gantry.admission.db.JobStore;
import io.gantry.runtime.http.Redaction;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The JSON shapes of the job endpoints. */
final class JobViews {
    private JobViews() {
    }

    /**
     * {@code view} as {@code tenant} may see it: the services' sentences name other jobs (a reclaim's preemptor, the
     * starving job quota is held for); the ids of other tenants' jobs among them are replaced (one query, none when
     * the view names no job).
     */
    @SuppressWarnings("unchecked")
    static <T> T shownTo(JobStore store, String tenant, T view) {
        Set<String> named = Redaction.jobIds(view);
        Set<String> others = named.isEmpty() ? Set.of() : store.othersJobs(tenant, named);
        return others.isEmpty() ? view : (T) Redaction.redact(view, others::contains);
    }

    static Map<String, Object> summary(JobRecord r) {
        JobStatus s = r.status();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("jobId", r.jobId());
        m.put("tenant", r.tenant());
        m.put("name", r.name());
        m.put("state", s.state().name());
        m.put("attempt", s.attempt());
        m.put("waitReason", s.waitReason());
        m.put("waitMessage", s.waitMessage());
        m.put("waitCause", s.waitCause());
        m.put("waitSince", text(s.waitSince()));
        m.put("preemption", s.preemption() == null ? null : notice(s.preemption()));
        m.put("idleWarning", s.idleWarning() == null ? null : idleWarning(s.idleWarning()));
        m.put("submittedAt", text(r.submittedAt()));
        m.put("updatedAt", text(r.updatedAt()));
        return m;
    }

    /** The summary, plus the spec, where the current attempt runs, its newest checkpoints, and the whole history. */
    static Map<String, Object> detail(JobRecord r, List<HistoryEntry> history, List<Map<String, Object>> checkpoints) {
        Map<String, Object> m = summary(r);
        m.put("spec", r.spec());
        m.put("suspended", suspended(r, history));
        m.put("pool", r.status().pool());
        m.put("placements", r.status().placements().stream().map(JobViews::placement).toList());
        m.put("checkpoints", checkpoints);
        m.put("history", history.stream().map(h -> {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("type", h.type());
            e.put("occurredAt", text(h.occurredAt()));
            e.put("attempt", h.attempt());
            e.put("detail", h.detail());
            return e;
        }).toList());
        return m;
    }

    /** The queue's idle warning of the current run: the sentence says since when and when it is stopped. */
    static Map<String, Object> idleWarning(JobStatus.Mark w) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("attempt", w.attempt());
        m.put("message", w.message());
        m.put("warnedAt", text(w.at()));
        return m;
    }

    /**
     * A run's preemption notice: why it is stopped and when what still runs is killed ({@code deadline}); a
     * checkpoint it commits before then is the one it resumes from.
     */
    static Map<String, Object> notice(JobStatus.Notice n) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("attempt", n.attempt());
        m.put("reason", n.reason());
        m.put("message", n.message());
        m.put("noticeAt", text(n.at()));
        m.put("deadline", text(n.deadline()));
        return m;
    }

    /**
     * Whether the job was asked to be suspended: its newest suspend or resume request, else its spec's {@code suspend}.
     * What the queue made of it shows as the wait reason ({@code SUSPENDED}) and the history.
     */
    static boolean suspended(JobRecord r, List<HistoryEntry> history) {
        for (int i = history.size() - 1; i >= 0; i--) {
            String type = history.get(i).type();
            if (type.equals(AdmissionFact.Kind.JOB_SUSPEND_REQUESTED.eventType())) {
                return true;
            }
            if (type.equals(AdmissionFact.Kind.JOB_RESUME_REQUESTED.eventType())) {
                return false;
            }
        }
        return r.spec() instanceof Map<?, ?> spec && Boolean.TRUE.equals(spec.get("suspend"));
    }

    private static Map<String, Object> placement(Placement p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("task", p.task());
        m.put("replica", p.replica());
        m.put("node", p.nodeId());
        m.put("gpuModel", p.gpuModel());
        m.put("gpuIndices", p.gpuIndices());
        return m;
    }

    private static String text(Instant i) {
        return i == null ? null : i.toString();
    }
}
