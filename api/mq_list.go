package api

import (
	"net/http"

	"github.com/dtq-dev/dtq/api/wire"
	"github.com/dtq-dev/dtq/queue"
)

// maxMQTopicList bounds the topics GET /api/v1/mq/{queue}/topics counts (one
// round trip each).
const maxMQTopicList = 500

// mqQueueList: GET /api/v1/mq → 200 the names of the message queues a
// message was put to.
func (s *Server) mqQueueList(w http.ResponseWriter, r *http.Request) {
	cfg := s.cfg.MessageQueue
	cfg.Namespace = s.c.Namespace()
	names, err := queue.Queues(r.Context(), s.redis, &cfg)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, wire.MQQueueList{Queues: append([]string{}, names...)})
}

// mqTopicList: GET /api/v1/mq/{queue}/topics[?group=] → 200 the queue's
// topics (the first maxMQTopicList, sorted) with their counts for the group.
func (s *Server) mqTopicList(w http.ResponseWriter, r *http.Request) {
	group, ok := s.mqGroup(w, r)
	if !ok {
		return
	}
	q, err := s.mq(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	names, err := q.Topics(r.Context())
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	out := wire.MQTopicList{Topics: make([]wire.MQTopic, 0, min(len(names), maxMQTopicList))}
	for _, t := range names[:min(len(names), maxMQTopicList)] {
		st, err := q.Stats(r.Context(), t, group)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		out.Topics = append(out.Topics, wire.MQTopic{Topic: t, Group: group, Queued: st.Queued, InFlight: st.InFlight, Delayed: st.Delayed})
	}
	writeJSON(w, http.StatusOK, out)
}
