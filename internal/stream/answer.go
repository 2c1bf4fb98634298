package stream

import (
	"context"
	"errors"

	"dgpviz/internal/turn"
	"dgpviz/internal/view"
)

// A view's Answer ops (the autoencoder's "decode") change nothing: they are
// answered from the latest publication by the session's answering
// goroutine, so they never wait for or slow down the optimizer, and a
// follower may ask them of the presenter's session too (follow.go). At
// most answerQueue wait; more get an error at once.

const answerQueue = 8

// answerable reports whether c is an Answer op of the session's view as
// last published (read by the reader goroutine).
func (s *session) answerable(c Command) bool {
	p := s.latest.Load()
	if p == nil {
		return false
	}
	op, ok := view.FindOp(p.view, c.Op)
	return ok && op.Answer != nil
}

// queueAnswer hands c to the answering goroutine, or answers it with an
// error when too many wait. Called by the reader.
func (s *session) queueAnswer(c Command) {
	select {
	case s.answers <- c:
	default:
		s.reply(reply{Type: "error", ID: c.ID, Op: c.Op, Error: c.Op + ": requests are waiting; send the next when an answer arrives"})
	}
}

// answerLoop answers the view's Answer ops until the session ends.
func (s *session) answerLoop() {
	defer s.recoverPanic("answers")
	for {
		select {
		case <-s.ctx.Done():
			return
		case c := <-s.answers:
			b, err := s.srv.answerAsJob(s.ctx, s.client, s.latest.Load(), c)
			if err != nil {
				s.errorReply(c, err)
				continue
			}
			s.send(outMsg{binary: true, data: b})
		}
	}
}

// answerAsJob answers c from publication p as a job of client in the
// server's pool (admit.Pool): in its turn, or with admit.ErrClientBusy at once when
// the client has too many jobs; ctx's end (the asker has gone) drops it.
func (srv *Server) answerAsJob(ctx context.Context, client string, p *publication, c Command) ([]byte, error) {
	j, err := srv.pool.Admit(client)
	if err != nil {
		return nil, errors.New(c.Op + ": " + err.Error())
	}
	defer j.End()
	var b []byte
	if terr := turn.Do(j.Context(ctx), func() { b, err = answer(ctx, p, c) }); terr != nil {
		return nil, terr
	}
	return b, err
}

// answer answers c from publication p with its view's Answer op.
func answer(ctx context.Context, p *publication, c Command) ([]byte, error) {
	if p == nil {
		return nil, errors.New(c.Op + ": the session has no model yet")
	}
	op, ok := view.FindOp(p.view, c.Op)
	if !ok || op.Answer == nil {
		return nil, errNotThisView(p.view, c.Op)
	}
	return op.Answer(ctx, p.snap, c)
}
