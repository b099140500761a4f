package io.gantry.placement.backend.slurm;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A controller in memory behind {@link SlurmCommands}: sbatch queues a RUNNING job, squeue / scontrol / sacct print
 * what the real tools print for it, scancel records its arguments and cancels. Tests change job and node states,
 * make a tool fail a number of times, or make every call hang (a controller that does not answer).
 */
final class FakeSlurm implements SlurmCommands {
    record Job(String id, String name, String partition, String node, String gres, String script, List<String> options) {
    }

    private final Map<String, Job> jobs = new LinkedHashMap<>();
    private final java.util.Set<String> forgotten = new java.util.HashSet<>();
    private final Map<String, String> state = new LinkedHashMap<>();
    private final Map<String, String> exit = new LinkedHashMap<>();
    private final Map<String, String> reason = new LinkedHashMap<>();
    private final Map<Tool, Integer> failures = new LinkedHashMap<>();
    private final Map<Tool, String> failureMessages = new LinkedHashMap<>();
    // read by the test thread while the backend adds: copy-on-write, so a stream over them never sees a change
    final List<List<String>> calls = new java.util.concurrent.CopyOnWriteArrayList<>();
    final List<List<String>> scancels = new java.util.concurrent.CopyOnWriteArrayList<>();
    volatile String nodes = "NodeName=g1 CPUTot=8 Sockets=1 RealMemory=64000 Gres=gpu:h100:8 State=IDLE Partitions=gantry\n"
            + "NodeName=g2 CPUTot=8 Sockets=1 RealMemory=64000 Gres=gpu:h100:8 State=IDLE Partitions=gantry\n";
    volatile String partitions = "PartitionName=gantry AllowGroups=gantry AllowAccounts=ALL AllowQos=ALL Nodes=g[1-2]\n";
    volatile boolean accounting;
    /** Jobs sbatch submits but whose submission it reports as a timeout (the controller was slow to answer). */
    volatile boolean submitThenTimeOut;
    private volatile CountDownLatch hang;
    private int nextId = 100;

    synchronized void failNext(Tool tool, int times, String message) {
        failures.put(tool, times);
        failureMessages.put(tool, message);
    }

    /** Every call blocks until {@link #answer()}. */
    void hang() {
        hang = new CountDownLatch(1);
    }

    void answer() {
        CountDownLatch h = hang;
        hang = null;
        if (h != null) {
            h.countDown();
        }
    }

    synchronized void set(String jobId, String jobState, String exitCode, String why) {
        state.put(jobId, jobState);
        exit.put(jobId, exitCode);
        reason.put(jobId, why);
    }

    /** The controller forgets the job (MinJobAge passed, or its state was lost); accounting keeps it. */
    synchronized void forget(String jobId) {
        forgotten.add(jobId);
    }

    /**
     * The node stops responding, as slurmctld sees it after {@code SlurmdTimeout}: it goes DOWN+NOT_RESPONDING and
     * the jobs running on it end NODE_FAIL.
     */
    synchronized void loseNode(String node) {
        nodes = nodes.lines().map(l -> l.startsWith("NodeName=" + node + " ")
                        ? l.replaceAll("State=\\S+", "State=DOWN+NOT_RESPONDING") : l)
                .collect(java.util.stream.Collectors.joining("\n", "", "\n"));
        for (Job j : jobs.values()) {
            if (node.equals(j.node()) && !SlurmOutput.terminal(state.get(j.id()))) {
                state.put(j.id(), "NODE_FAIL");
                exit.put(j.id(), "0:0");
                reason.put(j.id(), "NodeDown");
            }
        }
    }

    /** Jobs named {@code name} that have not ended (pending, running, completing). */
    synchronized long unfinished(String name) {
        return jobs.values().stream().filter(j -> j.name().equals(name) && !forgotten.contains(j.id())
                && !SlurmOutput.terminal(state.get(j.id()))).count();
    }

    /** A job submitted by someone else. */
    synchronized String foreign(String name, String partition, String node, String gres) {
        String id = Integer.toString(nextId++);
        jobs.put(id, new Job(id, name, partition, node, gres, "", List.of()));
        state.put(id, "RUNNING");
        return id;
    }

    synchronized List<Job> submitted() {
        return jobs.values().stream().filter(j -> !j.options().isEmpty()).toList();
    }

    synchronized String state(String jobId) {
        return state.get(jobId);
    }

    synchronized long count(Tool tool) {
        return calls.stream().filter(c -> c.get(0).equals(tool.command())).count();
    }

    @Override
    public String run(Tool tool, List<String> args, String stdin) throws SlurmCommandException {
        List<String> call = new ArrayList<>();
        call.add(tool.command());
        call.addAll(args);
        calls.add(call);
        CountDownLatch h = hang;
        if (h != null) {
            try {
                if (!h.await(30, TimeUnit.SECONDS)) {
                    throw new SlurmCommandException(tool.command() + " did not answer", true);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SlurmCommandException(tool.command() + " interrupted", true);
            }
        }
        synchronized (this) {
            Integer left = failures.get(tool);
            if (left != null && left > 0) {
                failures.put(tool, left - 1);
                throw new SlurmCommandException(tool.command() + " exited with 1: " + failureMessages.get(tool), false);
            }
            return switch (tool) {
                case SBATCH -> sbatch(args, stdin);
                case SQUEUE -> squeue(args);
                case SCONTROL -> scontrol(args);
                case SACCT -> sacct(args);
                case SCANCEL -> scancel(args);
            };
        }
    }

    private String sbatch(List<String> args, String stdin) throws SlurmCommandException {
        String id = Integer.toString(nextId++);
        jobs.put(id, new Job(id, option(args, "--job-name"), option(args, "--partition"), option(args, "--nodelist"),
                option(args, "--gres"), stdin, List.copyOf(args)));
        state.put(id, "RUNNING");
        if (submitThenTimeOut) {
            submitThenTimeOut = false;
            throw new SlurmCommandException("sbatch did not answer within 15000 ms", true);
        }
        return id + "\n";
    }

    private static String option(List<String> args, String name) {
        return args.stream().filter(a -> a.startsWith(name + "=")).map(a -> a.substring(name.length() + 1))
                .findFirst().orElse("");
    }

    private String squeue(List<String> args) {
        int n = args.indexOf("-n");
        String name = n >= 0 ? args.get(n + 1) : null;
        int p = args.indexOf("-p");
        String partition = p >= 0 ? args.get(p + 1) : null;
        StringBuilder out = new StringBuilder();
        for (Job j : jobs.values()) {
            if (forgotten.contains(j.id()) || (name != null && !name.equals(j.name())) || (partition != null && !partition.equals(j.partition()))) {
                continue;
            }
            String s = state.get(j.id());
            boolean pending = "PENDING".equals(s);
            out.append(j.id()).append('|').append(s).append("|gantry|").append(j.partition()).append('|')
                    .append(pending ? "" : j.node()).append('|').append(reason.getOrDefault(j.id(), "None"))
                    .append('|').append(j.gres().isEmpty() ? "N/A" : "gres:" + j.gres()).append('|').append(j.name())
                    .append("|(null)\n");
        }
        return out.toString();
    }

    private String scontrol(List<String> args) throws SlurmCommandException {
        if (args.get(1).equals("node")) {
            return nodes;
        }
        if (args.get(1).equals("partition")) {
            return partitions;
        }
        if (args.get(1).equals("topology")) {
            throw new SlurmCommandException("scontrol exited with 1: No topology information available", false);
        }
        String id = args.get(args.size() - 1);
        Job j = jobs.get(id);
        if (j == null || forgotten.contains(id)) {
            throw new SlurmCommandException("scontrol exited with 1: slurm_load_jobs error: Invalid job id specified",
                    false);
        }
        return "JobId=" + id + " JobName=" + j.name() + " JobState=" + state.get(id) + " Reason="
                + reason.getOrDefault(id, "None") + " ExitCode=" + exit.getOrDefault(id, "0:0") + "\n";
    }

    private String sacct(List<String> args) throws SlurmCommandException {
        if (!accounting) {
            throw new SlurmCommandException("sacct exited with 1: Slurm accounting storage is disabled", false);
        }
        StringBuilder out = new StringBuilder();
        for (Job j : jobs.values()) {
            out.append(j.id()).append('|').append(j.name()).append('|').append(state.get(j.id())).append('|')
                    .append(exit.getOrDefault(j.id(), "0:0")).append('\n');
        }
        return out.toString();
    }

    /**
     * As slurmctld: a signal other than KILL to a pending job is refused with "try again later", which scancel
     * retries until the caller's timeout; a plain cancel or KILL ends any job.
     */
    private String scancel(List<String> args) throws SlurmCommandException {
        scancels.add(List.copyOf(args));
        boolean signal = args.stream().anyMatch(a -> a.startsWith("--signal"));
        boolean kill = args.contains("--signal=KILL");
        boolean refused = false;
        for (String a : args) {
            if (jobs.containsKey(a) && !forgotten.contains(a) && !SlurmOutput.terminal(state.get(a))) {
                if (signal && !kill && "PENDING".equals(state.get(a))) {
                    refused = true;
                } else if (!signal || kill) {
                    state.put(a, "CANCELLED");
                    exit.put(a, "0:" + (kill ? 9 : 15));
                }
            }
        }
        if (refused) {
            throw new SlurmCommandException("scancel did not answer within 15000 ms (Job can not be altered now, "
                    + "try again later)", true);
        }
        return "";
    }
}
