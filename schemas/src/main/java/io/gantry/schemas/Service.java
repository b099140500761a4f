package io.gantry.schemas;

/** The Gantry services; each is the single writer of the topics named after it. */
public enum Service {
    ADMISSION("admission"),
    QUEUE("queue"),
    PLACEMENT("placement"),
    RECOVERY("recovery"),
    BILLING("billing");

    private final String id;

    Service(String id) {
        this.id = id;
    }

    /** Lower-case name used in topic names, consumer groups and transactional ids. */
    public String id() {
        return id;
    }
}
