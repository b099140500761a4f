package io.gantry.placement.backend;

import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The simulated backend's fault file ({@code gantry.placement.simulated.fault-file}): device faults to inject at
 * given virtual times after placement starts.
 *
 * <pre>
 * faults:
 *   - after: 30        # seconds of virtual time after the backend's first poll
 *     node: sim-1
 *     gpu: 3           # omit for a fault of the whole node
 *     kind: XID        # XID, ECC_DOUBLE_BIT, NVLINK_DOWN, PCIE_LINK_DOWN, GPU_LOST, THERMAL, UNKNOWN
 *     xid: 79          # only for XID
 *     message: fell off the bus   # optional
 * </pre>
 *
 * Every error names the entry and the field ({@code faults[2].kind: unknown kind WOBBLE}).
 */
public final class FaultFile {
    private FaultFile() {
    }

    public static List<SimulatedBackend.ScheduledFault> parse(String yaml) {
        Object root = new Yaml(new SafeConstructor(new LoaderOptions())).load(yaml);
        if (root == null) {
            return List.of();
        }
        if (!(root instanceof Map<?, ?> top) || !(top.get("faults") instanceof List<?> entries)) {
            throw new IllegalArgumentException("fault file: expected a top-level `faults:` list");
        }
        List<SimulatedBackend.ScheduledFault> out = new ArrayList<>();
        for (int i = 0; i < entries.size(); i++) {
            String at = "faults[" + i + "]";
            if (!(entries.get(i) instanceof Map<?, ?> e)) {
                throw new IllegalArgumentException(at + ": expected a mapping");
            }
            double after = number(e.get("after"), at + ".after", 0).doubleValue();
            if (after < 0) {
                throw new IllegalArgumentException(at + ".after: must be >= 0, was " + after);
            }
            Object node = e.get("node");
            if (!(node instanceof String n) || n.isBlank()) {
                throw new IllegalArgumentException(at + ".node: required");
            }
            Number gpu = number(e.get("gpu"), at + ".gpu", null);
            DeviceFault.Kind kind;
            try {
                kind = DeviceFault.Kind.valueOf(String.valueOf(e.get("kind")).toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException bad) {
                throw new IllegalArgumentException(at + ".kind: unknown kind " + e.get("kind"));
            }
            Number xid = number(e.get("xid"), at + ".xid", null);
            try {
                out.add(new SimulatedBackend.ScheduledFault(after, new DeviceFault(n, gpu == null ? null : gpu.intValue(),
                        kind, xid == null ? null : xid.intValue(), "fault-file",
                        e.get("message") == null ? null : String.valueOf(e.get("message")))));
            } catch (IllegalArgumentException bad) {
                throw new IllegalArgumentException(at + ": " + bad.getMessage());
            }
        }
        return out;
    }

    private static Number number(Object v, String field, Number absent) {
        if (v == null) {
            return absent;
        }
        if (v instanceof Number n) {
            return n;
        }
        throw new IllegalArgumentException(field + ": expected a number, was " + v);
    }
}
