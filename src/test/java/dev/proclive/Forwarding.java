package dev.proclive;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.function.Function;

/** The test kit's one way to make an interface forward its calls: to a real object, to a stand-in, counted. */
public final class Forwarding {

    private Forwarding() {
    }

    /**
     * A {@code type} whose every call (defaults and {@code Object}'s too) is made on the object
     * {@code to} picks for that method, and answers or throws as it does.
     */
    public static <T> T to(Class<T> type, Function<Method, ? extends T> to) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> {
            try {
                return method.invoke(to.apply(method), args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        }));
    }
}
