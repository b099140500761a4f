package io.gantry.recovery.core;

import java.util.Map;

/**
 * NVIDIA Xid codes and whose fault they are, after NVIDIA's "Xid Errors" table and DCGM's health watches.
 * Application Xids come from the program on the GPU (an illegal address, a page fault, a hung kernel): the run fails,
 * the device is fine. Hardware Xids mean the device, its memory or its links are faulty. A code not in the table is
 * treated as hardware: a device that might be broken is cheaper to cordon than to hand to the next job.
 */
public final class XidCatalog {
    private XidCatalog() {
    }

    /** Whose fault an Xid is, and what it means in a few words. */
    public record Xid(int code, FaultCategory category, String meaning) {
    }

    private static final Map<Integer, Xid> KNOWN = Map.ofEntries(
            app(13, "graphics engine exception"),
            app(31, "GPU memory page fault"),
            app(43, "GPU stopped processing"),
            app(45, "preemptive cleanup after an earlier error"),
            app(68, "video processor exception"),
            hw(48, "double-bit ECC error"),
            hw(61, "internal micro-controller breakpoint"),
            hw(62, "internal micro-controller halt"),
            hw(63, "ECC page retirement or row remapping"),
            hw(64, "ECC page retirement or row remapping failure"),
            hw(74, "NVLink error"),
            hw(79, "GPU has fallen off the bus"),
            hw(92, "high single-bit ECC error rate"),
            hw(94, "contained ECC error"),
            hw(95, "uncontained ECC error"),
            hw(119, "GSP RPC timeout"),
            hw(120, "GSP error"));

    private static Map.Entry<Integer, Xid> app(int code, String meaning) {
        return Map.entry(code, new Xid(code, FaultCategory.APPLICATION, meaning));
    }

    private static Map.Entry<Integer, Xid> hw(int code, String meaning) {
        return Map.entry(code, new Xid(code, FaultCategory.HARDWARE, meaning));
    }

    /** The code's entry; an unknown code is hardware, meaning {@code unknown Xid}. */
    public static Xid of(int code) {
        Xid x = KNOWN.get(code);
        return x != null ? x : new Xid(code, FaultCategory.HARDWARE, "unknown Xid, treated as a hardware fault");
    }

    public static boolean known(int code) {
        return KNOWN.containsKey(code);
    }

    /** Whose fault a report is: Xids by the table, every other kind is hardware. */
    public static FaultCategory category(FaultKind kind, Integer xid) {
        return kind == FaultKind.XID && xid != null ? of(xid).category() : FaultCategory.HARDWARE;
    }
}
