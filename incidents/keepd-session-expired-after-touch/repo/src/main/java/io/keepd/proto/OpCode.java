package io.keepd.proto;

public enum OpCode {
    CREATE_SESSION,
    PING,
    ACQUIRE,
    RENEW,
    RELEASE,
    CLOSE_SESSION
}
