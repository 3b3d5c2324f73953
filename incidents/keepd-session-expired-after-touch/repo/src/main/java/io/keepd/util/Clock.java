package io.keepd.util;

/** Time source; abstracted so tests can drive expiry deterministically. */
public interface Clock {
    Clock SYSTEM = System::currentTimeMillis;

    long nowMillis();
}
