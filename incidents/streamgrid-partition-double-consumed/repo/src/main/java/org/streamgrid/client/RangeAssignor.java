package org.streamgrid.client;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Assigns contiguous ranges of each topic's partitions to the members subscribed to it, in
 * member id order. The first {@code partitions % members} members get one extra partition.
 */
public final class RangeAssignor {
    public Map<String, List<String>> assign(Map<String, Integer> partitionsPerTopic,
                                            Map<String, List<String>> subscriptions) {
        Map<String, List<String>> consumersPerTopic = new HashMap<>();
        for (Map.Entry<String, List<String>> e : new TreeMap<>(subscriptions).entrySet()) {
            for (String topic : e.getValue()) {
                consumersPerTopic.computeIfAbsent(topic, t -> new ArrayList<>()).add(e.getKey());
            }
        }
        Map<String, List<String>> assignment = new HashMap<>();
        for (String memberId : subscriptions.keySet()) {
            assignment.put(memberId, new ArrayList<>());
        }
        for (Map.Entry<String, List<String>> e : consumersPerTopic.entrySet()) {
            String topic = e.getKey();
            List<String> consumers = e.getValue();
            Collections.sort(consumers);
            Integer numPartitions = partitionsPerTopic.get(topic);
            if (numPartitions == null) {
                continue;
            }
            int perConsumer = numPartitions / consumers.size();
            int withExtra = numPartitions % consumers.size();
            for (int i = 0; i < consumers.size(); i++) {
                int start = perConsumer * i + Math.min(i, withExtra);
                int length = perConsumer + (i + 1 > withExtra ? 0 : 1);
                for (int p = start; p < start + length; p++) {
                    assignment.get(consumers.get(i)).add(topic + "-" + p);
                }
            }
        }
        return assignment;
    }
}
