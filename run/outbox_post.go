package run

import (
	"context"
	"fmt"
)

// CommentFinder finds the comment an earlier writer of a run's outbox may have posted before
// it died (a *githubapp.Client is one): the comment on issue number whose body starts with
// marker and whose author is a bot; 0 when there is none.
type CommentFinder interface {
	FindComment(ctx context.Context, number int, marker string) (int64, error)
}

// statusMarker starts every status comment of run id (composeStatus).
func statusMarker(id int64) string { return fmt.Sprintf("<!-- frognano:run:%d -->", id) }

// postStatus posts outbox o's Status as run id's status comment on issue, once: it records that
// a post is under way before sending it, and a writer that finds that record looks for the
// comment (CommentFinder) before posting. The comment's id is kept in the run's row and in its
// outbox, so the writers after it edit that comment.
func (p *Pipeline) postStatus(ctx context.Context, repo Repo, id int64, issue int, o *outbox) (int64, error) {
	st := p.cfg.Store
	if o.Posting {
		if f, ok := repo.(CommentFinder); ok {
			found, err := f.FindComment(ctx, issue, statusMarker(id))
			if err != nil {
				return 0, fmt.Errorf("looking for the status comment an earlier writer posted: %w", err)
			}
			if found != 0 {
				return found, st.posted(ctx, id, found)
			}
		}
	} else if err := st.exec(ctx, "recording that the status comment is being posted",
		`UPDATE runs SET outbox = jsonb_set(outbox, '{posting}', 'true') WHERE id = $1 AND outbox IS NOT NULL`, id); err != nil {
		return 0, err
	}
	v := *o.Status
	_, extra, err := st.current(ctx, id)
	if err != nil {
		return 0, err
	}
	v.ExtraRequests = extra
	cid, err := repo.Comment(ctx, issue, RenderStatus(v))
	if err != nil {
		return 0, err
	}
	return cid, st.posted(ctx, id, cid)
}

// posted keeps comment cid as run id's status comment, in its row and in its outbox.
func (s *Store) posted(ctx context.Context, id, cid int64) error {
	return s.exec(ctx, "recording the status comment", `UPDATE runs SET comment_id = $2,
		outbox = CASE WHEN outbox IS NULL THEN NULL ELSE jsonb_set(outbox, '{comment_id}', to_jsonb($2::bigint)) END
		WHERE id = $1`, id, cid)
}
