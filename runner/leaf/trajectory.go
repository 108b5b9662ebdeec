package leaf

// TrajectoryFormat names the reference's trajectory document format.
const TrajectoryFormat = "leaf-function-calling"

// Trajectory is the reference's per-run JSON document; field order and names match it
// so runs can be replayed and compared with the reference tooling.
type Trajectory struct {
	TrajectoryFormat string           `json:"trajectory_format"`
	TrajectoryID     string           `json:"trajectory_id"`
	InstanceID       string           `json:"instance_id"`
	Seed             int              `json:"seed"`
	Messages         []Message        `json:"messages"`
	Tools            []ToolSchema     `json:"tools"`
	Steps            []TrajectoryStep `json:"steps"`
	NSteps           int              `json:"n_steps"`
	ExitReason       string           `json:"exit_reason"`
	// Error is null unless the run ended with llm_query_error or tool_error.
	Error         *string `json:"error"`
	FinalMessage  string  `json:"final_message"`
	ContextTokens int     `json:"context_tokens"`
	ElapsedSec    float64 `json:"elapsed_sec"`
	OutputPatch   string  `json:"output_patch"`
	Partial       bool    `json:"partial"`
}

// TrajectoryStep is one entry of Trajectory.Steps.
type TrajectoryStep struct {
	Step         int           `json:"step"`
	Assistant    Message       `json:"assistant"`
	Observations []Observation `json:"observations"`
}

// Trajectory renders r in the reference format. patch is the output patch (empty for
// a cancelled run, as the reference); partial marks a checkpoint of a run in progress.
func (r *Result) Trajectory(trajectoryID, instanceID string, seed int, patch string, partial bool) Trajectory {
	t := Trajectory{
		TrajectoryFormat: TrajectoryFormat,
		TrajectoryID:     trajectoryID,
		InstanceID:       instanceID,
		Seed:             seed,
		Messages:         append([]Message{}, r.Messages...),
		Tools:            ToolSchemas(),
		Steps:            make([]TrajectoryStep, 0, len(r.Steps)),
		NSteps:           r.NSteps,
		ExitReason:       r.ExitReason,
		FinalMessage:     r.FinalMessage,
		ContextTokens:    r.ContextTokens,
		ElapsedSec:       r.Elapsed.Seconds(),
		OutputPatch:      patch,
		Partial:          partial,
	}
	if r.Error != "" {
		e := r.Error
		t.Error = &e
	}
	for _, s := range r.Steps {
		obs := s.Observations
		if obs == nil {
			obs = []Observation{}
		}
		t.Steps = append(t.Steps, TrajectoryStep{Step: s.Index, Assistant: s.Assistant, Observations: obs})
	}
	return t
}
