package io.gantry.runtime.kafka;

import io.gantry.schemas.Service;

/** A command reached an instance that is a standby: the owner (at {@link #ownerUrl()}, when known) does the work. */
public final class NotOwnerException extends IllegalStateException {
    private final transient String ownerUrl;

    public NotOwnerException(Service service, String ownerUrl) {
        super(service.id() + ": this instance is a standby; " + (ownerUrl == null || ownerUrl.isEmpty()
                ? "no owner is known right now" : "the owner is " + ownerUrl));
        this.ownerUrl = ownerUrl;
    }

    /** The owner's HTTP base URL, or null. */
    public String ownerUrl() {
        return ownerUrl;
    }
}
