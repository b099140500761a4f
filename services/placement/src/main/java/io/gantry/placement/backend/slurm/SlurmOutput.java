package io.gantry.placement.backend.slurm;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads what the Slurm tools print: {@code scontrol show node|job|partition|topology -o}, {@code squeue} with
 * {@link #SQUEUE_FORMAT}, {@code sacct -P}. Plain string parsing, no I/O: a line it cannot read is skipped (the
 * tools print extra lines, e.g. "No jobs in the system"), never thrown on.
 */
public final class SlurmOutput {
    /**
     * The {@code squeue -o} format the backend asks for: id, state, user, partition, nodes, reason, gres per node,
     * then name and comment last (they are free text and may hold the separator).
     */
    public static final String SQUEUE_FORMAT = "%i|%T|%u|%P|%N|%r|%b|%j|%k";
    private static final Pattern KEY = Pattern.compile("^([A-Za-z][A-Za-z0-9_/:.]*)=(.*)$");
    private static final Pattern GRES = Pattern.compile("^([^:(]+)(?::([^:(]+))?:(\\d+)(?:\\((.*)\\))?$");

    private SlurmOutput() {
    }

    /** One node of {@code scontrol show node -o}. */
    public record Node(String name, Set<String> states, int cpus, int sockets, long realMemoryMiB,
                       long memSpecLimitMiB, List<Gres> gres, List<String> features, List<String> partitions,
                       String reason) {
        public Node {
            states = Set.copyOf(states);
            gres = List.copyOf(gres);
            features = List.copyOf(features);
            partitions = List.copyOf(partitions);
        }

        /** DOWN, DRAIN (draining or drained), FAIL, NOT_RESPONDING and the like: no new work, its runs at risk. */
        public boolean failing() {
            for (String s : states) {
                if (FAILING_NODE_STATES.contains(s)) {
                    return true;
                }
            }
            return false;
        }

        /** The node's state as Slurm prints it, e.g. {@code MIXED+DRAIN}. */
        public String stateText() {
            return String.join("+", states);
        }
    }

    /** Node state words that are a failure signal for Gantry (the node stops heartbeating). */
    public static final Set<String> FAILING_NODE_STATES = Set.of("DOWN", "DRAIN", "DRAINED", "DRAINING", "FAIL",
            "FAILING", "NOT_RESPONDING", "NO_RESPOND", "POWERED_DOWN", "POWER_DOWN", "POWERING_DOWN", "FUTURE",
            "INVAL", "REBOOT_ISSUED", "REBOOT_REQUESTED");

    /** One generic resource of a node: {@code gpu:h100:4(S:0)} is name gpu, type h100, 4, on socket 0. */
    public record Gres(String name, String type, int count, List<Integer> sockets) {
        public Gres {
            sockets = List.copyOf(sockets);
        }
    }

    /** One line of {@code squeue -o} {@link #SQUEUE_FORMAT}; {@code nodes} expanded. */
    public record QueuedJob(String jobId, String state, String user, String partition, List<String> nodes,
                            String reason, String gres, String name, String comment) {
        public QueuedJob {
            nodes = List.copyOf(nodes);
        }
    }

    /** What {@code scontrol show job -o} or {@code sacct} says of a finished job. */
    public record FinishedJob(String jobId, String name, String state, String reason, int exitCode, int signal) {
    }

    /** One partition of {@code scontrol show partition -o}. */
    public record Partition(String name, List<String> nodes, String allowGroups, String allowAccounts,
                            String allowQos, String denyAccounts, String denyQos) {
        public Partition {
            nodes = List.copyOf(nodes);
        }

        /** Whether anyone may submit to it (no group, account or QOS restriction). */
        public boolean openToAll() {
            return all(allowGroups) && all(allowAccounts) && all(allowQos) && none(denyAccounts) && none(denyQos);
        }

        private static boolean all(String v) {
            return v == null || v.isBlank() || "ALL".equalsIgnoreCase(v);
        }

        private static boolean none(String v) {
            return v == null || v.isBlank() || "(null)".equals(v);
        }
    }

    /** One switch of {@code scontrol show topology}: level 0 switches connect nodes, higher ones switches. */
    public record Switch(String name, int level, List<String> nodes, List<String> switches) {
        public Switch {
            nodes = List.copyOf(nodes);
            switches = List.copyOf(switches);
        }
    }

    // ------------------------------------------------------------------------------------------------ nodes

    public static List<Node> nodes(String output) {
        List<Node> nodes = new ArrayList<>();
        for (String line : output.split("\n")) {
            Map<String, String> kv = keyValues(line);
            String name = kv.get("NodeName");
            if (name == null || name.isBlank()) {
                continue;
            }
            Set<String> states = new TreeSet<>();
            for (String s : kv.getOrDefault("State", "UNKNOWN").split("\\+")) {
                if (!s.isBlank()) {
                    states.add(s.replace("*", "").trim().toUpperCase(Locale.ROOT));
                }
            }
            int cpus = intOr(kv.get("CPUEfctv"), intOr(kv.get("CPUTot"), 0));
            int sockets = Math.max(1, intOr(kv.get("Sockets"), 1) * Math.max(1, intOr(kv.get("Boards"), 1)));
            String reason = kv.get("Reason");
            nodes.add(new Node(name, states, cpus, sockets, longOr(kv.get("RealMemory"), 0),
                    longOr(kv.get("MemSpecLimit"), 0), gres(kv.getOrDefault("Gres", "")),
                    list(kv.getOrDefault("ActiveFeatures", kv.getOrDefault("AvailableFeatures", ""))),
                    list(kv.getOrDefault("Partitions", "")), reason == null ? "" : reason));
        }
        return nodes;
    }

    /** {@code gpu:h100:4(S:0),gpu:h100:4(S:1-2),nvme:1}; {@code (null)} is none. */
    public static List<Gres> gres(String value) {
        List<Gres> out = new ArrayList<>();
        for (String item : splitTopLevel(value.trim())) {
            Matcher m = GRES.matcher(item.trim());
            if (!m.matches()) {
                continue;
            }
            List<Integer> sockets = new ArrayList<>();
            String detail = m.group(4);
            if (detail != null && detail.startsWith("S:")) {
                for (String part : detail.substring(2).split(",")) {
                    sockets.addAll(range(part));
                }
            }
            out.add(new Gres(m.group(1), m.group(2), Integer.parseInt(m.group(3)), sockets));
        }
        return out;
    }

    // ------------------------------------------------------------------------------------------------ jobs

    public static List<QueuedJob> queue(String output) {
        List<QueuedJob> jobs = new ArrayList<>();
        for (String line : output.split("\n")) {
            String[] f = line.split("\\|", 9);
            if (f.length < 9 || f[0].isBlank() || !Character.isDigit(f[0].trim().charAt(0))) {
                continue;
            }
            jobs.add(new QueuedJob(f[0].trim(), f[1].trim(), f[2].trim(), f[3].trim(), hostnames(f[4].trim()),
                    f[5].trim(), f[6].trim(), f[7], f[8].strip()));
        }
        return jobs;
    }

    /** {@code scontrol show job -o}: one line per job. */
    public static List<FinishedJob> jobs(String output) {
        List<FinishedJob> jobs = new ArrayList<>();
        for (String line : output.split("\n")) {
            Map<String, String> kv = keyValues(line);
            String id = kv.get("JobId");
            if (id == null) {
                continue;
            }
            int[] exit = exitCode(kv.getOrDefault("ExitCode", "0:0"));
            jobs.add(new FinishedJob(id, kv.getOrDefault("JobName", ""), kv.getOrDefault("JobState", "UNKNOWN"),
                    kv.getOrDefault("Reason", ""), exit[0], exit[1]));
        }
        return jobs;
    }

    /** {@code sacct -n -P -o JobID,JobName,State,ExitCode}: job lines only (steps such as {@code 12.batch} skipped). */
    public static List<FinishedJob> sacct(String output) {
        List<FinishedJob> jobs = new ArrayList<>();
        for (String line : output.split("\n")) {
            String[] f = line.split("\\|", -1);
            if (f.length < 4 || f[0].isBlank() || f[0].contains(".")) {
                continue;
            }
            int[] exit = exitCode(f[3]);
            // "CANCELLED by 0": the state is the first word
            String state = f[2].trim().split(" ")[0];
            jobs.add(new FinishedJob(f[0].trim(), f[1], state, "", exit[0], exit[1]));
        }
        return jobs;
    }

    /** {@code 3:0} → exit 3, signal 0; {@code 0:15} → killed by signal 15. */
    static int[] exitCode(String value) {
        String[] f = value.trim().split(":");
        return new int[] {intOr(f[0], 0), f.length > 1 ? intOr(f[1], 0) : 0};
    }

    /** Slurm job states that will not change any more. */
    public static boolean terminal(String state) {
        return TERMINAL_JOB_STATES.contains(state);
    }

    private static final Set<String> TERMINAL_JOB_STATES = Set.of("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT",
            "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "SPECIAL_EXIT", "REVOKED");

    /** States in which a job holds (or is about to hold) its node's resources. */
    public static boolean holdsResources(String state) {
        return Set.of("RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "SIGNALING", "STAGE_OUT", "STOPPED",
                "RESIZING").contains(state);
    }

    /** GPUs a job holds per node, from its {@code %b}: {@code gres:gpu:h100:2}, {@code gres/gpu:2}, {@code gpu:4}. */
    public static int gpusPerNode(String tresPerNode) {
        int total = 0;
        for (String item : splitTopLevel(tresPerNode)) {
            String s = item.trim();
            s = s.startsWith("gres:") ? s.substring(5) : s.startsWith("gres/") ? s.substring(5) : s;
            String[] f = s.split(":");
            if (f.length >= 2 && f[0].equals("gpu")) {
                total += intOr(f[f.length - 1], 0);
            }
        }
        return total;
    }

    // ------------------------------------------------------------------------------------------------ partitions

    public static List<Partition> partitions(String output) {
        List<Partition> out = new ArrayList<>();
        for (String line : output.split("\n")) {
            Map<String, String> kv = keyValues(line);
            String name = kv.get("PartitionName");
            if (name == null) {
                continue;
            }
            String nodes = kv.getOrDefault("Nodes", "");
            out.add(new Partition(name, "(null)".equals(nodes) ? List.of() : hostnames(nodes),
                    kv.get("AllowGroups"), kv.get("AllowAccounts"), kv.get("AllowQos"), kv.get("DenyAccounts"),
                    kv.get("DenyQos")));
        }
        return out;
    }

    /** {@code scontrol show topology}; empty without a topology plugin. */
    public static List<Switch> topology(String output) {
        List<Switch> out = new ArrayList<>();
        for (String line : output.split("\n")) {
            Map<String, String> kv = keyValues(line);
            String name = kv.get("SwitchName");
            if (name == null) {
                continue;
            }
            String nodes = kv.getOrDefault("Nodes", "");
            String switches = kv.getOrDefault("Switches", "");
            out.add(new Switch(name, intOr(kv.get("Level"), 0), nodes.isBlank() ? List.of() : hostnames(nodes),
                    switches.isBlank() ? List.of() : hostnames(switches)));
        }
        return out;
    }

    // ------------------------------------------------------------------------------------------------ helpers

    /**
     * {@code Key=value Key2=two words} of one {@code -o} line: a word without {@code =} continues the previous
     * value (free text such as {@code OS=Linux 6.1 #1 SMP} or {@code Reason=disk failed [root@...]}).
     */
    public static Map<String, String> keyValues(String line) {
        Map<String, String> kv = new LinkedHashMap<>();
        String last = null;
        for (String word : line.trim().split(" +")) {
            if (word.isEmpty()) {
                continue;
            }
            Matcher m = KEY.matcher(word);
            if (m.matches()) {
                last = m.group(1);
                kv.put(last, m.group(2));
            } else if (last != null) {
                kv.put(last, kv.get(last) + " " + word);
            }
        }
        return kv;
    }

    /**
     * Expands a Slurm hostlist: {@code gpu[01-03,7],login1} → gpu01, gpu02, gpu03, gpu7, login1 (zero padding
     * kept; several bracket groups in one name multiply).
     */
    public static List<String> hostnames(String hostlist) {
        List<String> out = new ArrayList<>();
        if (hostlist == null || hostlist.isBlank() || "(null)".equals(hostlist)) {
            return out;
        }
        for (String item : splitTopLevel(hostlist)) {
            expand(item.trim(), out);
        }
        return out;
    }

    private static void expand(String name, List<String> out) {
        int open = name.indexOf('[');
        int close = name.indexOf(']', open + 1);
        if (open < 0 || close < 0) {
            if (!name.isEmpty()) {
                out.add(name);
            }
            return;
        }
        String prefix = name.substring(0, open);
        String rest = name.substring(close + 1);
        for (String part : name.substring(open + 1, close).split(",")) {
            String[] ends = part.split("-", 2);
            if (ends.length == 1) {
                expand(prefix + ends[0] + rest, out);
                continue;
            }
            int width = ends[0].length();
            long from = longOr(ends[0], 0);
            long to = longOr(ends[1], from);
            for (long i = from; i <= to && i - from < 100_000; i++) {
                expand(prefix + String.format(Locale.ROOT, "%0" + width + "d", i) + rest, out);
            }
        }
    }

    /** Splits at commas outside brackets and parentheses. */
    static List<String> splitTopLevel(String value) {
        List<String> out = new ArrayList<>();
        int depth = 0;
        StringBuilder cur = new StringBuilder();
        for (char c : value.toCharArray()) {
            if (c == '[' || c == '(') {
                depth++;
            } else if (c == ']' || c == ')') {
                depth = Math.max(0, depth - 1);
            }
            if (c == ',' && depth == 0) {
                out.add(cur.toString());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        if (cur.length() > 0) {
            out.add(cur.toString());
        }
        out.removeIf(s -> s.isBlank() || "(null)".equals(s.trim()) || "N/A".equals(s.trim()));
        return out;
    }

    private static List<Integer> range(String part) {
        List<Integer> out = new ArrayList<>();
        String[] ends = part.trim().split("-", 2);
        int from = intOr(ends[0], -1);
        int to = ends.length > 1 ? intOr(ends[1], from) : from;
        for (int i = from; i >= 0 && i <= to && out.size() < 1024; i++) {
            out.add(i);
        }
        return out;
    }

    private static List<String> list(String value) {
        List<String> out = new ArrayList<>();
        for (String s : value.split(",")) {
            if (!s.isBlank() && !"(null)".equals(s.trim())) {
                out.add(s.trim());
            }
        }
        return out;
    }

    static int intOr(String value, int fallback) {
        try {
            return value == null ? fallback : Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            return fallback;
        }
    }

    static long longOr(String value, long fallback) {
        try {
            return value == null ? fallback : Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            return fallback;
        }
    }
}
