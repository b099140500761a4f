package io.gantry.placement.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.gantry.placement.core.Gpu;
import io.gantry.placement.core.NodeSpec;
import io.gantry.placement.core.NodeView;
import io.gantry.placement.kafka.PlacementProcessor;
import io.gantry.runtime.http.Caller;
import io.gantry.runtime.http.Problem;
import io.gantry.runtime.http.Units;
import io.micronaut.core.annotation.Nullable;
import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.RequestAttribute;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;
import io.micronaut.serde.annotation.Serdeable;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** The node inventory, as placement sees it now. */
@Controller("/v1/nodes")
@ExecuteOn(TaskExecutors.BLOCKING)
public class NodesController {
    /** What a tenant sees instead of another tenant's job id. */
    static final String OTHER_TENANT = "(another tenant)";

    private final PlacementProcessor placement;

    private final io.micronaut.json.JsonMapper json;

    public NodesController(PlacementProcessor placement, io.micronaut.json.JsonMapper json) {
        this.placement = placement;
        this.json = json;
    }

    @Serdeable
    @JsonInclude(JsonInclude.Include.ALWAYS) // null fields are part of the answer (documented as null)
    public record GpuView(int index, String model, long memoryMiB, int numaNode, int pcieSwitch, int nvlinkDomain,
                          boolean migCapable, @Nullable String allocatedTo, List<ShareView> shares) {
    }

    /** A fraction or MIG instance on a GPU: who holds it and what it is. */
    @Serdeable
    @JsonInclude(JsonInclude.Include.ALWAYS) // null fields are part of the answer (documented as null)
    public record ShareView(String job, int milli, long memoryMiB, @Nullable String migProfile,
                            @Nullable Integer migSlice) {
    }

    @Serdeable
    public record SocketView(int socket, int cpuMillis, int freeCpuMillis, List<Integer> cores) {
    }

    @Serdeable
    public record NicView(String name, int numaNode, int pcieSwitch, int gbps) {
    }

    @Serdeable
    @JsonInclude(JsonInclude.Include.ALWAYS) // null fields are part of the answer (documented as null)
    public record NodeBody(String nodeId, String backend, String pool, boolean healthy, Map<String, String> labels, String spine,
                           String rack, List<GpuView> gpus, int freeGpus, int cpuMillis, long memoryMiB,
                           int freeCpuMillis, long freeMemoryMiB, List<SocketView> sockets, boolean cordoned,
                           @Nullable String reservedFor, List<NicView> rdmaNics, int foreignGpus,
                           @Nullable String foreignHolders) {
    }

    @Get
    public HttpResponse<?> list(io.micronaut.http.HttpRequest<?> request,
                                @Nullable @RequestAttribute(Caller.ATTRIBUTE) Caller caller) throws Exception {
        if (!placement.isReady()) {
            return Problem.response(HttpStatus.SERVICE_UNAVAILABLE, "Not ready", "placement is restoring its state",
                    List.of());
        }
        List<Snapshot> owned = placement.queryOwned(router -> {
            Map<String, String> tenants = new HashMap<>();
            Map<String, String> pools = new HashMap<>();
            List<NodeView> nodes = new java.util.ArrayList<>();
            router.pools().forEach((pool, h) -> {
                h.state().liveAllocations().forEach(a -> tenants.put(a.jobId(), a.tenant()));
                h.state().snapshot().nodes().forEach(n -> {
                    nodes.add(n);
                    pools.put(n.nodeId(), pool);
                });
            });
            return new Snapshot(nodes, pools, tenants);
        }).get(10, TimeUnit.SECONDS);
        List<NodeBody> body = new java.util.ArrayList<>();
        for (Snapshot s : owned) {
            body.addAll(bodies(s, caller));
        }
        try {
            // split by pool: the nodes of the pools other instances own, as they answer the same request
            Units.others(placement.units(), request, json, io.micronaut.core.type.Argument.listOf(NodeBody.class))
                    .forEach(body::addAll);
        } catch (Units.Unavailable u) {
            return u.answer();
        }
        body.sort(java.util.Comparator.comparing(NodeBody::nodeId));
        return HttpResponse.ok(body);
    }

    private record Snapshot(List<NodeView> nodes, Map<String, String> pools, Map<String, String> tenants) {
    }

    private static List<NodeBody> bodies(Snapshot s, Caller caller) {
        return s.nodes().stream().map(n -> {
            List<GpuView> gpus = n.spec().gpus().stream().map((Gpu g) -> {
                String job = n.allocatedTo().get(g.index());
                // tenants see only their own jobs
                if (job != null && caller != null && !caller.mayAccess(s.tenants().getOrDefault(job, ""))) {
                    job = OTHER_TENANT;
                }
                List<ShareView> shares = n.shares().getOrDefault(g.index(), List.of()).stream().map(h -> {
                    String holder = h.jobId();
                    if (caller != null && !caller.mayAccess(s.tenants().getOrDefault(holder, ""))) {
                        holder = OTHER_TENANT;
                    }
                    return new ShareView(holder, h.share().milli(), h.share().memoryMiB(), h.share().migProfile(),
                            h.share().migSlice());
                }).toList();
                return new GpuView(g.index(), g.model(), g.memoryMiB(), g.numaNode(), g.pcieSwitch(), g.nvlinkDomain(),
                        g.migCapable(), job, shares);
            }).toList();
            List<SocketView> sockets = new java.util.ArrayList<>();
            for (int i = 0; i < n.spec().sockets(); i++) {
                sockets.add(new SocketView(i, n.spec().socketCpuMillis(i), n.freeSocketCpuMillis().get(i),
                        n.spec().socketCoreIds(i)));
            }
            Map<String, String> labels = new java.util.TreeMap<>(n.labels());
            String reservedFor = n.spec().reservedFor();
            String reservedTenant = labels.getOrDefault(NodeSpec.RESERVED_TENANT_LABEL, "");
            if (reservedFor != null && caller != null && !caller.mayAccess(reservedTenant)) {
                reservedFor = OTHER_TENANT;
                labels.put(NodeSpec.RESERVED_FOR_LABEL, OTHER_TENANT);
                labels.put(NodeSpec.RESERVED_TENANT_LABEL, OTHER_TENANT);
            }
            // who holds GPUs outside Gantry (another team's pod, a Slurm user's job) is for operators only
            String foreignHolders = n.spec().foreignHolders();
            if (caller != null && !caller.admin()) {
                foreignHolders = null;
                labels.remove(NodeSpec.FOREIGN_HOLDERS_LABEL);
            }
            List<NicView> nics = n.spec().rdmaNics().stream()
                    .map(x -> new NicView(x.name(), x.numaNode(), x.pcieSwitch(), x.gbps())).toList();
            return new NodeBody(n.nodeId(), n.spec().backend(), s.pools().get(n.nodeId()), n.healthy(), labels, n.spec().spine(),
                    n.spec().rack(), gpus, n.freeGpuCount(), n.spec().cpuMillis(), n.spec().memoryMiB(),
                    n.freeCpuMillis(), n.freeMemoryMiB(), sockets, n.spec().cordoned(), reservedFor, nics,
                    n.foreignGpus().size(), foreignHolders);
        }).toList();
    }
}
