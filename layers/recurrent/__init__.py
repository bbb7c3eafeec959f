from layers.recurrent.bidirectional import Bidirectional
from layers.recurrent.gru import GRU
from layers.recurrent.lstm import LSTM
from layers.recurrent.simple_rnn import SimpleRNN
from layers.recurrent.time_distributed import TimeDistributed

__all__ = ["GRU", "LSTM", "Bidirectional", "SimpleRNN", "TimeDistributed"]
